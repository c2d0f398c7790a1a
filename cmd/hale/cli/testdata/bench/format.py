# format.py: format.hl in Python, with f-strings (in a function, so that
# the variables are fast locals).
def main():
    name = "item"
    total = 0
    for i in range(1000000):
        s = f"{name} {i} costs {i / 3:>8.2f} ({i:x})"
        total += len(s)
    print(total)


main()
