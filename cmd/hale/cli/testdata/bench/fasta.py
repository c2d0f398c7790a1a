# fasta.py: the Benchmarks Game's fasta (fasta.hl in plain
# single-threaded Python 3, the same algorithm): write three DNA
# sequences, one repeated from ALU and two drawn with the benchmark's
# linear congruential generator from cumulative probability tables.
import sys

ALU = (
    "GGCCGGGCGCGGTGGCTCACGCCTGTAATCCCAGCACTTTGG"
    "GAGGCCGAGGCGGGCGGATCACCTGAGGTCAGGAGTTCGAGA"
    "CCAGCCTGGCCAACATGGTGAAACCCCGTCTCTACTAAAAAT"
    "ACAAAAATTAGCCGGGCGTGGTGGCGCGCGCCTGTAATCCCA"
    "GCTACTCGGGAGGCTGAGGCAGGAGAATCGCTTGAACCCGGG"
    "AGGCGGAGGTTGCAGTGAGCCGAGATCGCGCCACTGCACTCC"
    "AGCCTGGGCGACAGAGCGAGACTCCGTCTCAAAAA"
)

IUB = [
    ("a", 0.27), ("c", 0.12), ("g", 0.12), ("t", 0.27),
    ("B", 0.02), ("D", 0.02), ("H", 0.02), ("K", 0.02),
    ("M", 0.02), ("N", 0.02), ("R", 0.02), ("S", 0.02),
    ("V", 0.02), ("W", 0.02), ("Y", 0.02),
]

HOMO_SAPIENS = [
    ("a", 0.3029549426680), ("c", 0.1979883004921),
    ("g", 0.1975473066391), ("t", 0.3015094502008),
]

IM, IA, IC = 139968, 3877, 29573
LINE = 60
seed = 42


def random(limit):
    global seed
    seed = (seed * IA + IC) % IM
    return limit * seed / IM


def repeat_fasta(header, s, n, out):
    out.append(header)
    k = 0
    width = len(s)
    doubled = s + s
    while n > 0:
        m = min(n, LINE)
        out.append(doubled[k:k + m])
        k = (k + m) % width
        n -= m


def random_fasta(header, table, n, out):
    out.append(header)
    chars = [c for c, _ in table]
    cumulative = []
    p = 0.0
    for _, q in table:
        p += q
        cumulative.append(p)
    last = len(table) - 1
    while n > 0:
        m = min(n, LINE)
        line = []
        for _ in range(m):
            r = random(1.0)
            i = 0
            while i < last and r >= cumulative[i]:
                i += 1
            line.append(chars[i])
        out.append("".join(line))
        n -= m


def main(n):
    out = []
    repeat_fasta(">ONE Homo sapiens alu", ALU, n * 2, out)
    random_fasta(">TWO IUB ambiguity codes", IUB, n * 3, out)
    random_fasta(">THREE Homo sapiens frequency", HOMO_SAPIENS, n * 5, out)
    print("\n".join(out))


main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
