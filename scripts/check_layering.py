#!/usr/bin/env python3
"""Fails when a module includes a module it does not depend on.

A module is one library of src/ or tools/ (tw_<name>, declared in
<root>/<folder>/CMakeLists.txt with add_library and target_link_libraries). A file may include headers of its
own library, of the libraries it links, and of what those link PUBLIC (their
headers show it), as CMake passes usage on; a PRIVATE link is its library's
own business. An include of anything else (a module above it, a sibling it
does not link, a module a library it links uses privately) is a layering
violation, even when the build happens to succeed because the whole src/ is on
the include path. The client library's public headers live in include/tickwire/,
in folders named for their modules (include/tickwire/client/client.h is tw_client's), and
are included as "tickwire/client/client.h": that root is read the same way, its files held
to their module's links and an include's "tickwire/" prefix dropped to find its module.
Run by scripts/test.sh; tests/layering checks the checker.

usage: check_layering.py [ROOT...]   (default: src/, tools/ and include/tickwire/ of the repository)
"""
import pathlib
import re
import sys

ADD_LIBRARY = re.compile(r"add_library\(\s*(\w+)([^)]*)\)", re.S)
LINK = re.compile(r"target_link_libraries\(\s*(\w+)([^)]*)\)", re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
PUBLIC_PREFIX = "tickwire/"  # how the public headers are included
SOURCE_SUFFIXES = (".cc", ".h")


def strip_comments(text):
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def read_libraries(roots):
    """{library: (folder, {source stem}, {linked library}, {library linked PUBLIC})}, for the tw_ libraries."""
    libraries = {}
    for root, cmake in ((r, c) for r in roots for c in sorted(r.rglob("CMakeLists.txt"))):
        folder = cmake.parent.relative_to(root).as_posix()
        text = strip_comments(cmake.read_text())
        for name, body in ADD_LIBRARY.findall(text):
            stems = {pathlib.PurePosixPath(word).stem for word in body.split() if word.endswith(".cc")}
            libraries[name] = (folder, stems, set(), set())
        for name, body in LINK.findall(text):
            if name not in libraries:
                continue
            public = True  # CMake's default for a plain list, and PUBLIC/INTERFACE sections
            for word in body.split():
                if word in ("PUBLIC", "PRIVATE", "INTERFACE"):
                    public = word != "PRIVATE"
                elif word.startswith("tw_"):
                    libraries[name][2].add(word)
                    if public:
                        libraries[name][3].add(word)
    return libraries


def reachable(libraries, start):
    """What a file of `start` may include: its own library, those it links, and their PUBLIC links, transitively."""
    seen, todo = {start}, list(libraries.get(start, ((), (), set(), ()))[2])
    while todo:
        name = todo.pop()
        if name in seen or name not in libraries:
            continue
        seen.add(name)
        todo.extend(libraries[name][3])
    return seen


def owners(libraries, path):
    """The libraries a file of src/ belongs to: the one with its stem among its sources, else every library of its folder."""
    folder, stem = path.parent.as_posix(), path.stem
    in_folder = [name for name, (f, _, _, _) in libraries.items() if f == folder]
    exact = [name for name in in_folder if stem in libraries[name][1]]
    return exact or in_folder


def violations(roots):
    libraries = read_libraries(roots)
    closure = {name: reachable(libraries, name) for name in libraries}
    found = []
    for root, path in ((r, p) for r in roots for p in sorted(r.rglob("*")) if p.suffix in SOURCE_SUFFIXES):
        rel = path.relative_to(root)
        mine = owners(libraries, rel)
        if not mine:
            continue
        allowed = set().union(*(closure[name] for name in mine))
        for included in INCLUDE.findall(path.read_text(errors="replace")):
            target = pathlib.PurePosixPath(included.removeprefix(PUBLIC_PREFIX))
            if not any((r / target).exists() for r in roots):
                continue  # not a header of the roots (a system or generated header)
            theirs = owners(libraries, target)
            if theirs and not allowed.intersection(theirs):
                found.append(f"{rel}: includes \"{included}\" ({' or '.join(theirs)}), "
                             f"but {' / '.join(mine)} does not link it")
    return found


def main():
    repository = pathlib.Path(__file__).resolve().parent.parent
    roots = [pathlib.Path(a) for a in sys.argv[1:]] or [
        repository / "src", repository / "tools", repository / "include" / "tickwire"]
    found = violations(roots)
    for line in found:
        print(line)
    print(f"layering: {len(found)} violation(s) in {', '.join(str(r) for r in roots)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
