# strbuild.py: strbuild.hl in Python.
def build(n):
    s = ""
    for i in range(n):
        s += str(i) + ","
    return s


def main():
    s = build(300000)
    print(str(len(s)) + " " + s[len(s) - 7:])


main()
