"""Safe output: every command that writes goes through this module.

A result folder is written into a fresh temporary sibling (``.NAME.XXXX.aqmlab-tmp``) and renamed
into place only when everything was written, so a failure, Ctrl-C (SIGINT) or SIGTERM leaves
neither a partial folder nor the temporary behind. The folder gets a manifest, ``.aqmlab``, that
lists what aqmlab wrote; an existing folder is replaced only if it is empty or holds nothing but
what its manifest lists. Anything else -- a user's folder, a folder with an extra file, a file --
is refused with a one-line :class:`OutputError` unless ``force=True`` (``--force``). The current
folder and its parents, the home folder and the root are refused even with ``force``.

A single output file (a figure, a policy) is written to a temporary sibling and renamed; an
existing file is replaced only with ``force``. Created folders and files follow the umask.

Examples
--------
>>> import tempfile, pathlib
>>> base = pathlib.Path(tempfile.mkdtemp())
>>> with output_dir(base / "run") as tmp:
...     _ = (tmp / "summary.json").write_text("{}")
>>> sorted(p.name for p in (base / "run").iterdir())
['.aqmlab', 'summary.json']
>>> with output_dir(base / "run") as tmp:   # an aqmlab folder is replaced
...     _ = (tmp / "summary.json").write_text("{}")
>>> _ = (base / "run" / "notes.txt").write_text("mine")
>>> with output_dir(base / "run") as tmp:
...     pass
Traceback (most recent call last):
...
aqmlab.output.OutputError: output folder '...run' is not empty (use --force to replace it)
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

__all__ = [
    "MANIFEST",
    "OutputError",
    "Interrupted",
    "signals_raise",
    "signals_deferred",
    "check_output_dir",
    "check_output_file",
    "output_dir",
    "output_file",
    "manifest_command",
    "manifest_files",
    "refresh_manifest",
    "write_atomic",
    "temp_file_beside",
]

#: Name of the manifest aqmlab writes into every result folder.
MANIFEST = ".aqmlab"
_TMP_SUFFIX = ".aqmlab-tmp"


class OutputError(ValueError):
    """An output path is not acceptable; the message names the path and the reason."""


class Interrupted(KeyboardInterrupt):
    """SIGTERM (or SIGINT) turned into an exception by :func:`signals_raise`; ``signum`` is
    the signal."""

    def __init__(self, signum: int):
        super().__init__(f"signal {signum}")
        self.signum = signum


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


def _forbidden(path: Path) -> str | None:
    """Why ``path`` may never be replaced, or None."""
    resolved = path.resolve()
    if resolved == Path(resolved.anchor):
        return "the root folder"
    with contextlib.suppress(RuntimeError):
        if resolved == Path.home().resolve():
            return "the home folder"
    cwd = Path.cwd().resolve()
    if resolved == cwd:
        return "the current folder"
    if resolved in cwd.parents:
        return "a parent of the current folder"
    return None


def _manifest_files(folder: Path) -> set[str] | None:
    """The relative paths the folder's manifest lists, or None if it is not an aqmlab folder."""
    try:
        data = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("tool") != "aqmlab":
        return None
    files = data.get("files")
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return set(files)


def _contents(folder: Path) -> set[str]:
    """Every file, link and folder below ``folder`` as relative paths (folders end in '/')."""
    out: set[str] = set()
    for root, dirs, files in os.walk(folder, followlinks=False):
        rel = Path(root).relative_to(folder)
        for d in dirs:
            p = Path(root) / d
            out.add(str(rel / d) + ("" if p.is_symlink() else "/"))
        for f in files:
            out.add(str(rel / f))
    return {p.removeprefix("./") for p in out}


def _replaceable(folder: Path) -> bool:
    """True if ``folder`` is empty or holds only what its aqmlab manifest lists."""
    contents = _contents(folder)
    if not contents:
        return True
    listed = _manifest_files(folder)
    if listed is None:
        return False
    return contents <= listed | {MANIFEST}


def check_output_dir(path: str | os.PathLike[str], force: bool = False) -> Path:
    """Check that a result folder may be written at ``path``; return it as a Path.

    Parameters
    ----------
    path : path-like
        The folder.
    force : bool
        Allow replacing a folder that holds more than an aqmlab result.

    Returns
    -------
    Path

    Raises
    ------
    OutputError
        ``path`` is empty, the root, the home folder, the current folder or a parent of it, a
        file, below a file, or an existing folder that is not a replaceable aqmlab result
        (unless ``force``).
    """
    text = os.fspath(path)
    if not str(text).strip():
        raise OutputError("output folder '': give a folder name")
    p = Path(text)
    why = _forbidden(p)
    if why is not None:
        raise OutputError(f"output folder '{text}': refusing to replace {why}")
    if p.is_symlink() or (p.exists() and not p.is_dir()):
        raise OutputError(f"output folder '{text}': is a file, not a folder")
    for parent in p.resolve().parents:
        if parent.exists():
            if not parent.is_dir():
                raise OutputError(f"output folder '{text}': '{parent}' is a file")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise OutputError(f"output folder '{text}': cannot write in '{parent}'")
            break
    if p.is_dir() and not force and not _replaceable(p):
        raise OutputError(f"output folder '{text}' is not empty (use --force to replace it)")
    return p


def check_output_file(
    path: str | os.PathLike[str],
    force: bool = False,
    suffixes: Sequence[str] | None = None,
    what: str = "output file",
) -> Path:
    """Check that a single file may be written at ``path``; return it as a Path.

    Parameters
    ----------
    path : path-like
        The file.
    force : bool
        Replace an existing file.
    suffixes : sequence of str, optional
        Accepted extensions (lower case, with the dot), e.g. ``(".png", ".pdf")``.
    what : str
        How the message names the file (``"--plot"``).

    Returns
    -------
    Path
    """
    text = os.fspath(path)
    if not str(text).strip():
        raise OutputError(f"{what} '': give a file name")
    p = Path(text)
    if suffixes is not None and p.suffix.lower() not in suffixes:
        raise OutputError(
            f"{what} '{text}': unknown extension '{p.suffix}' (use {', '.join(suffixes)})"
        )
    if p.is_dir():
        raise OutputError(f"{what} '{text}': is a folder")
    parent = p.resolve().parent
    if not parent.is_dir():
        raise OutputError(f"{what} '{text}': folder '{parent}' does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{what} '{text}': cannot write in '{parent}'")
    if (p.exists() or p.is_symlink()) and not force:
        raise OutputError(f"{what} '{text}' exists (use --force to replace it)")
    return p


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """Turn SIGTERM (and SIGINT, as Python already does) into an exception while writing.

    Yields
    ------
    None
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _raise(signum, _frame):
        raise Interrupted(signum)

    old = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back while the block finishes what must not be left half-done
    (a sweep's table and manifest after its runs); a signal that came meanwhile is raised as
    :class:`Interrupted` when the block ends (unless the block raised already).

    Yields
    ------
    None
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []

    def _note(signum, _frame):
        got.append(signum)

    old = {sig: signal.signal(sig, _note) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
    if got:
        raise Interrupted(got[0])


def _make_parents(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents (umask applies); return the created ones."""
    created = []
    for p in [*reversed(folder.parents), folder]:
        if not p.exists():
            try:
                p.mkdir()
            except OSError as e:
                raise OutputError(f"cannot create folder '{p}': {e.strerror}") from None
            created.append(p)
    return created


def _remove_created(created: list[Path]) -> None:
    for p in reversed(created):
        with contextlib.suppress(OSError):
            p.rmdir()


def _manifest_text(folder: Path, command: str | None, ours: set[str] | None = None) -> str:
    """The manifest of ``folder``: what it holds (of ``ours`` only, when given)."""
    held = _contents(folder)
    if ours is not None:
        held &= ours
    files = sorted(f for f in held | {MANIFEST} if not Path(f).name.endswith(_TMP_SUFFIX))
    from aqmlab import __version__

    data = {"tool": "aqmlab", "version": __version__, "command": command, "files": files}
    return json.dumps(data, indent=1) + "\n"


def _write_manifest(folder: Path, command: str | None) -> None:
    (folder / MANIFEST).write_text(_manifest_text(folder, command))


@contextlib.contextmanager
def output_dir(
    path: str | os.PathLike[str], force: bool = False, command: str | None = None
) -> Iterator[Path]:
    """Yield a fresh temporary folder that replaces ``path`` when the block succeeds.

    Parameters
    ----------
    path : path-like
        The result folder (checked first by :func:`check_output_dir`).
    force : bool
        Replace an existing folder that holds more than an aqmlab result.
    command : str, optional
        Recorded in the manifest.

    On any exception, SIGINT or SIGTERM, the temporary folder (and any parent folder this call
    created) is removed and ``path`` is left as it was.

    Yields
    ------
    Path
        The temporary folder to write into.
    """
    target = check_output_dir(path, force)
    created = _make_parents(target.resolve().parent)
    try:
        tmp = Path(
            tempfile.mkdtemp(
                prefix=f".{target.name}.", suffix=_TMP_SUFFIX, dir=target.resolve().parent
            )
        )
    except OSError as e:
        _remove_created(created)
        raise OutputError(f"output folder '{os.fspath(path)}': {e.strerror}") from None
    old: Path | None = None
    try:
        with signals_raise():
            os.chmod(tmp, 0o777 & ~_umask())
            yield tmp
            _write_manifest(tmp, command)
            if target.is_dir():
                # the folder may have changed during a long run: check again before replacing
                check_output_dir(path, force)
                old = Path(
                    tempfile.mkdtemp(
                        prefix=f".{target.name}.", suffix=".aqmlab-old", dir=tmp.parent
                    )
                )
                os.replace(target, old / target.name)
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and not target.exists():
            os.replace(old / target.name, target)
        _remove_created(created)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def temp_file_beside(target: Path, keep_suffix: bool = True) -> Path:
    """Create an empty temporary file next to ``target`` (``.NAME.XXXX.aqmlab-tmp.EXT``, or
    without ``.EXT`` if not ``keep_suffix``; mode by the umask) and return its path; the caller
    renames it onto ``target`` or removes it. For files written over a long time (a streamed
    trace) where :func:`output_file`'s block does not fit.

    Parameters
    ----------
    target : Path
        The file it will replace.
    keep_suffix : bool
        Keep ``target``'s extension (for writers that choose the format by it).

    Returns
    -------
    Path
    """
    fd, name = tempfile.mkstemp(
        prefix=f".{target.name}.",
        suffix=f"{_TMP_SUFFIX}{target.suffix}" if keep_suffix else _TMP_SUFFIX,
        dir=target.resolve().parent,
    )
    os.close(fd)
    tmp = Path(name)
    os.chmod(tmp, 0o666 & ~_umask())
    return tmp


@contextlib.contextmanager
def output_file(
    path: str | os.PathLike[str],
    force: bool = False,
    suffixes: Sequence[str] | None = None,
    what: str = "output file",
) -> Iterator[Path]:
    """Yield a temporary file name (same folder and extension) that replaces ``path`` on success.

    See :func:`check_output_file` for the checks. On any exception, SIGINT or SIGTERM the
    temporary file is removed and ``path`` is untouched.

    Parameters
    ----------
    path : path-like
        The file.
    force : bool
        Replace an existing file.
    suffixes : sequence of str, optional
        Accepted extensions (lower case, with the dot).
    what : str
        How the message names the file.

    Yields
    ------
    Path
        The temporary file name to write.
    """
    target = check_output_file(path, force, suffixes, what)
    tmp = temp_file_beside(target)
    try:
        with signals_raise():
            yield tmp
            os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


# -- folders that grow in place (a sweep's records) -------------------------------------------
# A sweep writes each finished run into its folder as it finishes, so that Ctrl-C keeps them;
# the folder itself was created by output_dir. These keep it a replaceable aqmlab result that
# lists only what aqmlab wrote: a user's file put into it is never adopted.


def manifest_command(folder: str | os.PathLike[str]) -> str | None:
    """The command recorded in an aqmlab folder's manifest, or None if it is not one.

    Parameters
    ----------
    folder : path-like
        The folder.

    Returns
    -------
    str or None
    """
    p = Path(folder)
    if _manifest_files(p) is None:
        return None
    try:
        return json.loads((p / MANIFEST).read_text()).get("command")
    except (OSError, ValueError):
        return None


def manifest_files(folder: str | os.PathLike[str]) -> set[str]:
    """The relative paths an aqmlab folder's manifest lists (empty if it is not one).

    Parameters
    ----------
    folder : path-like
        The folder.

    Returns
    -------
    set of str
    """
    return _manifest_files(Path(folder)) or set()


def _with_parents(paths: Iterable[str]) -> set[str]:
    """``paths`` and every folder above them, folders ending in '/' as the manifest has them."""
    out: set[str] = set()
    for p in paths:
        out.add(p)
        parts = p.rstrip("/").split("/")[:-1]
        out.update("/".join(parts[: i + 1]) + "/" for i in range(len(parts)))
    return out


def refresh_manifest(
    folder: str | os.PathLike[str], command: str | None, written: Iterable[str] = ()
) -> None:
    """Rewrite the manifest of an aqmlab folder (atomically) so that it lists what aqmlab wrote
    there: what the manifest listed already and ``written`` (paths relative to ``folder``, with
    their folders), as far as they still exist. Anything else found in the folder (a file a
    user put there) is not listed, so the folder is not replaced without ``force`` while it is
    there. Temporaries (``.*.aqmlab-tmp``) are removed first.

    Parameters
    ----------
    folder : path-like
        The aqmlab folder.
    command : str or None
        The command recorded.
    written : iterable of str
        Paths (relative to ``folder``) aqmlab wrote there.
    """
    p = Path(folder)
    for root, dirs, files in os.walk(p):
        for f in files:
            if f.startswith(".") and f.endswith(_TMP_SUFFIX):
                with contextlib.suppress(OSError):
                    os.unlink(Path(root) / f)
        for d in dirs:
            if d.startswith(".") and d.endswith(_TMP_SUFFIX):
                shutil.rmtree(Path(root) / d, ignore_errors=True)
    ours = _with_parents(manifest_files(p) | set(written))
    text = _manifest_text(p, command, ours)
    with write_atomic(p / MANIFEST) as tmp:
        tmp.write_text(text)


@contextlib.contextmanager
def write_atomic(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary name next to ``path`` that replaces it when the block succeeds (no
    checks: for files inside a folder aqmlab owns). On failure the temporary is removed.

    Parameters
    ----------
    path : path-like
        The file.

    Yields
    ------
    Path
        The temporary name to write.
    """
    target = Path(path)
    tmp = temp_file_beside(target, keep_suffix=False)  # a name the manifest refresh sweeps
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
