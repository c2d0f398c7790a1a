# spectralnorm.py: the Benchmarks Game's spectral-norm (spectralnorm.hl
# in plain single-threaded Python 3, the same algorithm): the spectral
# norm of an infinite matrix A, by 10 power iterations of A^T A on an
# N-vector.
import sys


def eval_a(i, j):
    return 1.0 / ((i + j) * (i + j + 1) // 2 + i + 1)


def mul_av(n, v, av):
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += eval_a(i, j) * v[j]
        av[i] = s


def mul_atv(n, v, atv):
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += eval_a(j, i) * v[j]
        atv[i] = s


def mul_atav(n, v, atav, tmp):
    mul_av(n, v, tmp)
    mul_atv(n, tmp, atav)


def main(n):
    u = [1.0] * n
    v = [0.0] * n
    tmp = [0.0] * n
    for _ in range(10):
        mul_atav(n, u, v, tmp)
        mul_atav(n, v, u, tmp)
    vbv = vv = 0.0
    for i in range(n):
        vbv += u[i] * v[i]
        vv += v[i] * v[i]
    print(f"{(vbv / vv) ** 0.5:.9f}")


main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
