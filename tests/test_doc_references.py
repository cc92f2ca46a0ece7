"""Every file of the repository refers only to documents that are in the repository.

The documentation has to stand on its own: a reader of a clean checkout must be able to open
every document a page, a docstring, a comment or a generated report points at. The check walks
every tracked file (``git ls-files``, so it sees exactly what a clean checkout holds) and looks
for three kinds of reference:

1. **Markdown links** in ``*.md`` files: ``[text](target)`` whose target is not a URL must name
   a tracked file or folder relative to the page, and a ``#fragment`` must name a heading of the
   target page (GitHub's heading anchors).
2. **Repository paths** in any file: a path that starts at one of the repository's top-level
   folders (``docs/x.md``, ``crates/...``, ``python/...``, ``scenarios/...``, ``validation/...``,
   ``tests/...``, ``benches/...``) must match a tracked file or folder (``*`` globs allowed).
   A bare Markdown page name (``repro.md``) must be the name of a tracked page. Other bare file
   names (``summary.json``, ``policy.json``, ``report.md`` written by a command) are outputs,
   not repository documents, and are not checked unless a folder of the repository precedes them.
3. **Documents known to live outside the repository**: the papers' restatement file once used
   during development, the shared design note, the folder the paper texts were kept in, and
   absolute machine paths. The papers are cited by authors, year, section, equation, figure or
   table instead.
"""

import fnmatch
import functools
import re
import subprocess
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOP = ("docs", "crates", "python/aqmlab", "scenarios", "validation", "tests", "benches")

# Names of documents that are not in the repository (case-sensitive where the repository has a
# file of the same name in another case: docs/design.md is ours, DESIGN.md is not).
OUTSIDE = [
    # (names assembled so that the repository holds none of them literally)
    (re.compile("ALGO" + "RITHMS"), "a restatement of the papers that is not in the repository"),
    (re.compile(r"\bDESIGN\.md\b"), "a design note that is not in the repository"),
    (re.compile(r"shared/papers|\.\./shared/|papers folder"), "a folder outside it"),
    (re.compile(r"\b00[0-4]_(?:[0-9a-f]{16}\.txt|\*)"), "a paper text outside it"),
    # (assembled so that the repository holds no such path literally)
    (re.compile(r"(?<![\w.])/" + "work" + "/"), "an absolute path of one machine"),
    (re.compile(r"§ ?4 items? \d"), "a numbered decision of that restatement"),
    (re.compile(r"\b[Ii]ssues? #?\d+\b"), "an entry of an issue tracker outside the repository"),
]
# This file: its docstring, patterns and examples name such references on purpose.
THIS = Path(__file__).resolve().relative_to(ROOT).as_posix()

LINK = re.compile(
    r"(?<!!)\[(?:[^\]\n]|\\\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|!\[[^\]\n]*\]\(([^)\s]+)\)"
)
REPO_PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(TOP) + r")/[\w.*/-]*[\w*/])")
BARE_PAGE = re.compile(r"(?<![\w./-])([A-Za-z][\w-]*\.md)\b")
# Upper-case words that stand for a value in a path (``scenarios/CASE-seedN.toml``).
PLACEHOLDER = re.compile(r"(?<![A-Z])(CASE|NAME|DIR|N)(?![A-Za-z])")

# Paths and names that are outputs of a command, not documents of the repository; each with the
# files that mention it and why.
OUTPUTS = [
    (
        ("python/aqmlab/repro/*", "docs/repro.md"),
        re.compile(r"scenarios/[\w.-]+"),
        "a reproduction's output folder holds its scenarios/ (docs/repro.md)",
    ),
    (
        ("*rfc7928*", "docs/sweep.md", "tests/test_sweep_trust.py"),
        re.compile(r"summary\.md"),
        "the RFC 7928 suite's summary (docs/rfc7928.md)",
    ),
]


@functools.cache
def tracked() -> tuple[str, ...]:
    """The tracked files of the repository, as POSIX paths relative to its root."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError) as e:  # pragma: no cover - no git checkout
        pytest.skip(f"needs a git checkout to list the repository's files: {e}")
    return tuple(p for p in out.decode().split("\0") if p)


@functools.cache
def folders() -> frozenset[str]:
    """Every folder that holds a tracked file."""
    out = set()
    for f in tracked():
        parts = f.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            out.add("/".join(parts[:i]))
    return frozenset(out)


def exists(path: str) -> bool:
    """Whether ``path`` (repository-relative, may hold ``*``) names a tracked file or folder."""
    path = path.rstrip("/")
    if "*" in path:
        return any(fnmatch.fnmatchcase(f, path) for f in (*tracked(), *folders()))
    return path in tracked() or path in folders()


def resolves(path: str, where: str) -> bool:
    """Whether ``path``, mentioned in tracked file ``where``, names something of the repository.

    The path is taken from the repository's root, or from the root of the crate that ``where``
    belongs to (``tests/alloc.rs`` in crates/netsim); upper-case placeholders match any text, and
    a path that .gitignore excludes (a build product such as ``validation/ns3/build/``) is not a
    document.
    """
    cands = [path]
    if where.startswith("crates/"):
        cands.append("/".join(where.split("/")[:2]) + "/" + path)
    for c in cands:
        if exists(c) or exists(PLACEHOLDER.sub("*", c)):
            return True
    ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=ROOT)
    return ignored.returncode == 0


def is_output(where: str, name: str) -> bool:
    """Whether ``name`` mentioned in ``where`` is a command's output listed in ``OUTPUTS``."""
    return any(
        any(fnmatch.fnmatchcase(where, g) for g in files) and pat.fullmatch(name)
        for files, pat, _ in OUTPUTS
    )


@functools.cache
def anchors(page: str) -> frozenset[str]:
    """GitHub's heading anchors of the tracked Markdown page ``page``."""
    return heading_anchors((ROOT / page).read_text(encoding="utf-8"))


def heading_anchors(text: str) -> frozenset[str]:
    """GitHub's anchors of the headings of Markdown ``text``.

    GitHub lower-cases the heading's text, drops every character that is not a letter, a mark,
    a digit, a connector (``_``), a space or a hyphen, turns spaces into hyphens and numbers
    repeated anchors ``-1``, ``-2``, ...
    """
    out, seen = set(), {}
    fence = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))  # a link keeps its text
        slug = "".join(
            c
            for c in title.lower()
            if c in " -" or unicodedata.category(c) == "Pc" or unicodedata.category(c)[0] in "LMN"
        ).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return frozenset(out)


def text_files() -> list[str]:
    """The tracked files that are text (a NUL byte in the first 8 KiB marks a binary file)."""
    return [f for f in tracked() if b"\0" not in (ROOT / f).read_bytes()[:8192]]


def problems(f: str, text: str) -> list[str]:
    """Every reference of file ``f`` (content ``text``) to a document not in the repository."""
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        for pat, why in OUTSIDE:
            for m in pat.finditer(line):
                out.append(f"{f}:{no}: {m.group(0)!r} names {why}")
        for m in REPO_PATH.finditer(line):
            if not resolves(m.group(1), f) and not is_output(f, m.group(1)):
                out.append(f"{f}:{no}: {m.group(1)!r} is not a file of the repository")
        for m in BARE_PAGE.finditer(line):
            name = m.group(1)
            if any(pat.search(name) for pat, _ in OUTSIDE) or is_output(f, name):
                continue  # reported above, or an output
            if not any(t.rsplit("/", 1)[-1] == name for t in tracked()):
                out.append(f"{f}:{no}: {name!r} is not a page of the repository")
        if f.endswith(".md"):
            out += link_problems(f, no, line, text)
    return out


def link_problems(f: str, no: int, line: str, text: str) -> list[str]:
    """The Markdown links on line ``no`` of page ``f`` whose target is not in the repository."""
    out = []
    for m in LINK.finditer(line):
        target = m.group(1) or m.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # a URL (https:, mailto:)
            continue
        path, _, frag = target.partition("#")
        if not path:
            if frag and frag not in heading_anchors(text):
                out.append(f"{f}:{no}: link {target!r}: no heading #{frag} on this page")
            continue
        parts: list[str] = []
        for p in (Path(f).parent / path).as_posix().split("/"):
            if p == "..":
                if not parts:
                    out.append(f"{f}:{no}: link {target!r} leaves the repository")
                    break
                parts.pop()
            elif p not in ("", "."):
                parts.append(p)
        else:
            full = "/".join(parts)
            if not exists(full):
                out.append(f"{f}:{no}: link {target!r} names no file of the repository")
            elif frag and full.endswith(".md") and frag not in anchors(full):
                out.append(f"{f}:{no}: link {target!r}: {full} has no heading #{frag}")
    return out


def test_every_reference_is_in_the_repository():
    found = [
        p
        for f in text_files()
        if f != THIS
        for p in problems(f, (ROOT / f).read_text(encoding="utf-8", errors="replace"))
    ]
    assert not found, f"{len(found)} reference(s) to documents not in the repository:\n" + (
        "\n".join(found)
    )


def test_the_check_finds_each_kind_of_reference():
    # A page with one reference of each kind the check must report, and the legitimate forms
    # next to them (the real tree has no bad reference left to show that the check can fail).
    outside = "ALGO" + "RITHMS.md"  # assembled: the repository names no outside document
    decision = "§4 item 3"
    page = [
        "# Title",
        "## A section",
        f"The offset is as in {outside}.",  # a document outside the repository
        f"The offset is decision {decision}.",  # a numbered decision of that document
        "See [the design](../design.md#data-flow) and [here](#a-section).",  # fine
        "See [gone](../nothere.md).",  # no such file
        "See [design](../design.md#no-such-heading).",  # no such heading
        "See [up](#missing).",  # no such heading on this page
        "See [far](../../../x.md).",  # leaves the repository
        "The schema is crates/netsim/SCHEMA.md; pages are docs/aqm/*.md.",  # fine
        "The law is in crates/aqm/src/nothere.rs.",  # no such file
        "Written to summary.json; see repro.md and nothere.md.",  # nothere.md
        "Cite [the RFC](https://www.rfc-editor.org/rfc/rfc8289) and SQM §II-A.",  # fine
        "As " + "issue 9" + " asked.",  # a tracker entry outside the repository
    ]
    found = problems("docs/aqm/example.md", "\n".join(page))
    lines = [int(p.split(":")[1]) for p in found]
    assert lines == [3, 4, 6, 7, 8, 9, 11, 12, 14], found
    assert "'nothere.md' is not a page" in found[-2]
