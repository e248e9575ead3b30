#!/usr/bin/env python3
"""Fails when a module includes a module it does not depend on.

A module is one library of src/ (tw_<name>, declared in src/<folder>/CMakeLists.txt
with add_library and target_link_libraries). A file may include headers of its
own library and of the libraries it links, directly or through them; an include
of anything else (a module above it, a sibling it does not link) is a layering
violation, even when the build happens to succeed because the whole src/ is on
the include path. Run by scripts/test.sh; tests/layering checks the checker.

usage: check_layering.py [SRC_DIR]   (default: src/ beside this script)
"""
import pathlib
import re
import sys

ADD_LIBRARY = re.compile(r"add_library\(\s*(\w+)([^)]*)\)", re.S)
LINK = re.compile(r"target_link_libraries\(\s*(\w+)([^)]*)\)", re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCE_SUFFIXES = (".cc", ".h")


def strip_comments(text):
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def read_libraries(src):
    """{library: (folder, {source stem}, {linked library})}, for the tw_ libraries of src/."""
    libraries = {}
    for cmake in sorted(src.rglob("CMakeLists.txt")):
        folder = cmake.parent.relative_to(src).as_posix()
        text = strip_comments(cmake.read_text())
        for name, body in ADD_LIBRARY.findall(text):
            stems = {pathlib.PurePosixPath(word).stem for word in body.split() if word.endswith(".cc")}
            libraries[name] = (folder, stems, set())
        for name, body in LINK.findall(text):
            if name in libraries:
                libraries[name][2].update(w for w in body.split() if w.startswith("tw_"))
    # A library whose sources come from a glob owns its folder's headers without a .cc of the same stem.
    return libraries


def reachable(libraries, start):
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in seen or name not in libraries:
            continue
        seen.add(name)
        todo.extend(libraries[name][2])
    return seen


def owners(libraries, path):
    """The libraries a file of src/ belongs to: the one with its stem among its sources, else every library of its folder."""
    folder, stem = path.parent.as_posix(), path.stem
    in_folder = [name for name, (f, _, _) in libraries.items() if f == folder]
    exact = [name for name in in_folder if stem in libraries[name][1]]
    return exact or in_folder


def violations(src):
    libraries = read_libraries(src)
    closure = {name: reachable(libraries, name) for name in libraries}
    found = []
    for path in sorted(p for p in src.rglob("*") if p.suffix in SOURCE_SUFFIXES):
        rel = path.relative_to(src)
        mine = owners(libraries, rel)
        if not mine:
            continue
        allowed = set().union(*(closure[name] for name in mine))
        for included in INCLUDE.findall(path.read_text(errors="replace")):
            target = pathlib.PurePosixPath(included)
            if not (src / target).exists():
                continue  # not a header of src/ (a system or generated header)
            theirs = owners(libraries, target)
            if theirs and not allowed.intersection(theirs):
                found.append(f"{rel}: includes \"{included}\" ({' or '.join(theirs)}), "
                             f"but {' / '.join(mine)} does not link it")
    return found


def main():
    src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent / "src")
    found = violations(src)
    for line in found:
        print(line)
    print(f"layering: {len(found)} violation(s) in {src}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
