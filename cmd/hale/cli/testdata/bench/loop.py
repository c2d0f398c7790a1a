# loop.py: loop.hl in Python (a function, so that s and i are fast locals).
def main():
    s = 0
    for i in range(1000000):
        s += i
    print(s)


main()
