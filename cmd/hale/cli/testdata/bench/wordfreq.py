# wordfreq.py: wordfreq.hl in Python.
def text(n):
    s = ""
    x = 42
    letters = ["a", "c", "g", "t"]
    for i in range(n):
        x = (x * 3877 + 29573) % 139968
        s = s + letters[x * 4 // 139968]
    return s


def count(s, k):
    m = {}
    for i in range(len(s) - k + 1):
        w = s[i:i + k]
        if w in m:
            m[w] += 1
        else:
            m[w] = 1
    return m


def positions(s):
    m = {}
    for i in range(len(s)):
        k = (i * 7919 + ord(s[i])) % 1000
        if k in m:
            m[k] += 1
        else:
            m[k] = 1
    return m


def main():
    s = text(200000)
    three = count(s, 3)
    six = count(s, 6)
    pos = positions(s)
    print(" ".join(str(v) for v in [len(three), three["ggt"], len(six), six["ggtatt"], len(pos), pos[7]]))


main()
