#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generates a large, deterministic Java source tree for the HPROF benchmark's javac workload
(used when JDK 17's src.zip is not installed).

usage: gen_sources.py <out dir> [packages] [classes per package]

Every class has fields, generic collections, lambdas and streams, a nested enum and record,
string switches, interfaces and calls into classes of other packages, so javac exercises
attribution, generics inference, lambda desugaring and code generation as on real code.
"""
import argparse
import os
import random


def clazz(rng, pkg, name, packages, classes):
    others = [(f"bench.p{p}", f"C{c}") for p in range(packages) for c in range(classes)]
    peers = rng.sample(others, 3)
    lines = [f"package {pkg};", "",
             "import java.util.*;", "import java.util.function.*;", "import java.util.stream.*;", ""]
    lines += [f"public class {name} implements Comparable<{name}>, Supplier<String> {{"]
    lines += [f"  public enum Kind {{ " + ", ".join(f"K{i}" for i in range(6)) + " }",
              f"  public record Pair(String key, long value) {{}}",
              f"  private final Map<String, List<Integer>> index = new HashMap<>();",
              f"  private final List<Pair> pairs = new ArrayList<>();",
              f"  private long total;",
              f"  private Kind kind = Kind.K{rng.randrange(6)};", ""]
    for m in range(rng.randint(8, 14)):
        k = rng.randrange(5)
        if k == 0:
            lines += [f"  public long m{m}(int n) {{",
                      f"    long acc = {rng.randrange(1000)};",
                      f"    for (int i = 0; i < n; i++) {{",
                      f"      acc += (i * {rng.randrange(1, 97)}L) ^ (acc >>> {rng.randrange(1, 13)});",
                      f"      if ((acc & 7) == {rng.randrange(8)}) acc -= i;",
                      f"    }}",
                      f"    total += acc;", f"    return acc;", f"  }}"]
        elif k == 1:
            lines += [f"  public List<String> m{m}(Collection<? extends CharSequence> in) {{",
                      f"    return in.stream()",
                      f"        .map(CharSequence::toString)",
                      f"        .filter(s -> s.length() > {rng.randrange(5)})",
                      f"        .map(s -> s + \"{name}{m}\")",
                      f"        .sorted(Comparator.comparing(String::length).thenComparing(Function.identity()))",
                      f"        .collect(Collectors.toList());", f"  }}"]
        elif k == 2:
            cases = [f"      case \"c{i}\" -> {rng.randrange(100)};" for i in range(rng.randint(4, 9))]
            lines += [f"  public int m{m}(String s) {{", f"    return switch (s) {{"] + cases + [
                      f"      default -> s.hashCode() % {rng.randrange(2, 50)};", f"    }};", f"  }}"]
        elif k == 3:
            lines += [f"  public <T extends Comparable<T>> Optional<T> m{m}(List<T> xs, Predicate<? super T> p) {{",
                      f"    Map<Boolean, List<T>> parts = xs.stream().collect(Collectors.partitioningBy(p));",
                      f"    index.computeIfAbsent(\"m{m}\", key -> new ArrayList<>()).add(parts.get(true).size());",
                      f"    return parts.get(true).stream().max(Comparator.naturalOrder());", f"  }}"]
        else:
            pp, pc = peers[rng.randrange(3)]
            lines += [f"  public String m{m}({pp}.{pc} other) {{",
                      f"    StringBuilder sb = new StringBuilder();",
                      f"    for (Kind k : Kind.values()) {{",
                      f"      pairs.add(new Pair(k.name(), other == null ? 0 : other.compareTo(null == other ? other : other)));",
                      f"      sb.append(k.ordinal()).append(':').append(pairs.size()).append(';');",
                      f"    }}",
                      f"    return sb.toString();", f"  }}"]
    lines += [f"  @Override public int compareTo({name} o) {{ return Long.compare(total, o == null ? 0 : o.total); }}",
              f"  @Override public String get() {{ return kind + \"/\" + total + \"/\" + pairs.size(); }}",
              f"}}", ""]
    return "\n".join(lines)


def positive(text):
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer: {text}")
    return value


def main():
    parser = argparse.ArgumentParser(
        description="Generates a deterministic Java source tree for the HPROF benchmark's javac "
                    "workload.")
    parser.add_argument("out", help="directory to write the tree into (created if missing)")
    parser.add_argument("packages", nargs="?", type=positive, default=20,
                        help="number of packages (default 20)")
    parser.add_argument("classes", nargs="?", type=positive, default=40,
                        help="classes per package (default 40)")
    args = parser.parse_args()
    if args.out.startswith("-"):
        parser.error(f"output directory looks like an option: {args.out}")
    out, packages, classes = args.out, args.packages, args.classes
    rng = random.Random(20260423)
    for p in range(packages):
        pkg = f"bench.p{p}"
        d = os.path.join(out, *pkg.split("."))
        os.makedirs(d, exist_ok=True)
        for c in range(classes):
            with open(os.path.join(d, f"C{c}.java"), "w") as f:
                f.write(clazz(rng, pkg, f"C{c}", packages, classes))


if __name__ == "__main__":
    main()
