# binarytrees.py: the Benchmarks Game's binary-trees (binarytrees.hl in
# plain single-threaded Python 3, the same algorithm): allocate and walk
# many perfect binary trees, one long-lived.
import sys


def make_tree(depth):
    if depth == 0:
        return (None, None)
    return (make_tree(depth - 1), make_tree(depth - 1))


def check(tree):
    left, right = tree
    if left is None:
        return 1
    return 1 + check(left) + check(right)


def main(n):
    min_depth = 4
    max_depth = max(min_depth + 2, n)
    stretch = max_depth + 1
    print(f"stretch tree of depth {stretch}\t check: {check(make_tree(stretch))}")
    long_lived = make_tree(max_depth)
    for depth in range(min_depth, max_depth + 1, 2):
        iterations = 1 << (max_depth - depth + min_depth)
        total = 0
        for _ in range(iterations):
            total += check(make_tree(depth))
        print(f"{iterations}\t trees of depth {depth}\t check: {total}")
    print(f"long lived tree of depth {max_depth}\t check: {check(long_lived)}")


main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
