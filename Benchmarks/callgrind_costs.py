#!/usr/bin/env python3
"""Reads callgrind dumps written with --compress-strings=no --compress-pos=no and prints
what Benchmarks/callgrind.sh divides per request.

  callgrind_costs.py totals FILE            -> "IR MALLOCS SHA256"
  callgrind_costs.py top FILE [N] [MINUS]   -> the N functions (and objects) with the most
                                               self instructions, minus dump MINUS when given

IR is every instruction of the dump (all threads). MALLOCS counts the calls into glibc's
allocation entry points (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign
and their __libc_ aliases) made from outside them, so realloc(NULL) counting its inner
malloc once is not counted twice. SHA256 is the instructions spent in OpenSSL's SHA-256
functions called from outside OpenSSL (a proxy's own digests, not TLS's): valgrind hides
the CPU's SHA extensions, so this share costs several times what it costs natively.
Deterministic: the counts are callgrind's, not a sample.
"""
import collections
import sys

ALLOCATORS = {
    "malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign", "valloc",
    "__libc_malloc", "__libc_calloc", "__libc_realloc", "__posix_memalign", "__libc_memalign",
}


OPENSSL = ("libcrypto", "libssl")


def parse(path):
    """Self Ir per (object, function), the allocation calls, and the inclusive Ir of
    SHA-256 calls from outside OpenSSL, of one dump."""
    self_ir = collections.Counter()
    mallocs = 0
    sha256 = 0
    ob = fn = cfn = ""
    after_calls = False
    count_call = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            c = line[:1]
            if c.isdigit() or c in "+-*":
                if after_calls:
                    after_calls = False  # the inclusive cost of the call just named
                    if count_call:
                        parts = line.split()
                        sha256 += int(parts[1]) if len(parts) >= 2 else 0
                    continue
                parts = line.split()
                if len(parts) >= 2:
                    self_ir[(ob, fn)] += int(parts[1])
                continue
            if line.startswith("fn="):
                fn = line[3:].strip()
            elif line.startswith("ob="):
                ob = line[3:].strip()
            elif line.startswith("cfn="):
                cfn = line[4:].strip()
            elif line.startswith("calls="):
                after_calls = True
                if cfn in ALLOCATORS and fn not in ALLOCATORS:
                    mallocs += int(line[6:].split()[0])
                count_call = cfn.startswith("SHA256") and not ob.rsplit("/", 1)[-1].startswith(OPENSSL)
    return self_ir, mallocs, sha256


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("totals", "top"):
        sys.exit(__doc__)
    self_ir, mallocs, sha256 = parse(sys.argv[2])
    if sys.argv[1] == "totals":
        print(sum(self_ir.values()), mallocs, sha256)
        return
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    if len(sys.argv) > 4:
        minus, minus_mallocs, minus_sha256 = parse(sys.argv[4])
        self_ir.subtract(minus)
        mallocs -= minus_mallocs
        sha256 -= minus_sha256
    total = sum(self_ir.values())
    objects = collections.Counter()
    for (ob, _), ir in self_ir.items():
        objects[ob.rsplit("/", 1)[-1]] += ir
    print("total Ir %d, mallocs %d, SHA-256 called from outside OpenSSL %d Ir" % (total, mallocs, sha256))
    print("\nself Ir by object:")
    for ob, ir in objects.most_common(12):
        print("%6.2f%% %12d  %s" % (100.0 * ir / total, ir, ob))
    print("\nself Ir by function:")
    for (ob, fn), ir in self_ir.most_common(count):
        print("%6.2f%% %12d  %s  [%s]" % (100.0 * ir / total, ir, fn[:150], ob.rsplit("/", 1)[-1]))


if __name__ == "__main__":
    main()
