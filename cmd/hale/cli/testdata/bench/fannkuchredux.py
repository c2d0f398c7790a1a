# fannkuchredux.py: the Benchmarks Game's fannkuch-redux
# (fannkuchredux.hl in plain single-threaded Python 3, the same
# algorithm): for every permutation of 1..N, count the pancake flips
# until 1 is first; print the checksum and the largest count.
import sys


def fannkuch(n):
    perm1 = list(range(n))
    count = [0] * n
    max_flips = 0
    checksum = 0
    perm_count = 0
    r = n
    while True:
        while r != 1:
            count[r - 1] = r
            r -= 1
        perm = perm1[:]
        flips = 0
        k = perm[0]
        while k != 0:
            i, j = 0, k
            while i < j:
                perm[i], perm[j] = perm[j], perm[i]
                i += 1
                j -= 1
            flips += 1
            k = perm[0]
        max_flips = max(max_flips, flips)
        checksum += flips if perm_count % 2 == 0 else -flips
        # The next permutation: rotate the first r+1 elements until a
        # counter does not wrap.
        while True:
            if r == n:
                return checksum, max_flips
            perm0 = perm1[0]
            for i in range(r):
                perm1[i] = perm1[i + 1]
            perm1[r] = perm0
            count[r] -= 1
            if count[r] > 0:
                break
            r += 1
        perm_count += 1


def main(n):
    checksum, max_flips = fannkuch(n)
    print(checksum)
    print(f"Pfannkuchen({n}) = {max_flips}")


main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
