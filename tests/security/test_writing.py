"""Every file countgrid writes goes through one atomic, symlink-safe writer
(countgrid._utils.atomic; docs/security.md, "Writing"): nothing planted next to an output can
redirect or block it, a failure (a full disk, an error, Ctrl-C) leaves the previous file
intact, concurrent writers never leave a damaged file, and an output is never one of the
inputs."""
import errno
import os
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import countgrid
from countgrid import io, maps
from countgrid._utils.atomic import atomic_write, check_target
from countgrid.text import Corpus

from cli.test_verbs import TRACEBACK, run

SMALL = ["--grid", "6x6", "--window", "2x2", "--n-iter", "2", "--coarse-iter", "0",
         "--threads", "1", "--min-df", "1", "-q"]


@pytest.fixture(scope="module")
def fitted():
    X = np.random.default_rng(0).poisson(1.0, (30, 20))
    cg = countgrid.CountingGrid((5, 5), (2, 2), n_iter=2, random_state=0, num_threads=1)
    with pytest.warns(countgrid.ConvergenceWarning):
        cg.fit(X)
    return cg, X


@pytest.fixture()
def docs(tmp_path):
    path = tmp_path / "docs.txt"
    path.write_text("\n".join(["apple banana cherry", "banana cherry date",
                               "cherry date egg", "date egg fig", "egg fig apple"] * 4) + "\n")
    return path


# ------------------------------------------------------------------- the writer itself
def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="boom"):
        with atomic_write(target) as fh:
            fh.write(b"new and partial")
            raise RuntimeError("boom")
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["out.bin"]


def test_a_full_disk_leaves_the_old_model_intact(tmp_path, fitted, monkeypatch):
    """An ENOSPC in the middle of the write (injected into the file object's write)."""
    cg, _ = fitted
    path = tmp_path / "m.npz"
    cg.save(path)
    before = path.read_bytes()
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, fh):
            self.fh, self.n = fh, 0

        def write(self, data):
            self.n += len(data)
            if self.n > 2000:
                raise OSError(errno.ENOSPC, "No space left on device")
            return self.fh.write(data)

        def __getattr__(self, name):
            return getattr(self.fh, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self.fh.__exit__(*exc)

    monkeypatch.setattr(os, "fdopen", lambda *a, **k: Full(real_fdopen(*a, **k)))
    with pytest.raises(OSError, match="No space left"):
        cg.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["m.npz"]
    assert np.array_equal(countgrid.load(path).pi_, cg.pi_)


def test_a_real_write_limit_leaves_the_old_model_intact(tmp_path, fitted):
    """The kernel refuses the write (RLIMIT_FSIZE, EFBIG: what a full disk does to the
    writer), in a child process."""
    cg, _ = fitted
    path = tmp_path / "m.npz"
    cg.save(path)
    before = path.read_bytes()
    script = textwrap.dedent(f"""
        import resource, signal, sys, numpy as np, countgrid
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        big = countgrid.CountingGrid((5, 5), (2, 2))
        big.__dict__.update(countgrid.load({str(path)!r}).__dict__)
        big.pi_ = np.random.default_rng(0).dirichlet(np.ones(20000), size=(5, 5))
        big.n_features_in_ = 20000
        try:
            big.save({str(path)!r})
        except OSError as exc:
            print("refused", exc.errno)
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    assert "refused 27" in res.stdout, res.stdout          # EFBIG
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["m.npz"]


def test_permissions_of_new_and_replaced_files(tmp_path):
    new = tmp_path / "new.txt"
    with atomic_write(new, "w") as fh:
        fh.write("x")
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o666 & ~umask
    os.chmod(new, 0o640)
    with atomic_write(new, "w") as fh:
        fh.write("y")
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o640 and new.read_text() == "y"


def test_a_symlink_at_the_target_is_replaced_not_followed(tmp_path, fitted):
    cg, _ = fitted
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "m.npz"
    link.symlink_to(victim)
    cg.save(link)
    assert victim.read_text() == "precious"
    assert not link.is_symlink() and countgrid.load(link).pi_.shape == (5, 5, 20)


@pytest.mark.parametrize("kind", ["fifo", "dir", "dev"])
def test_special_targets_are_refused_at_once(tmp_path, fitted, kind):
    cg, _ = fitted
    if kind == "fifo":
        target = tmp_path / "m.npz"
        os.mkfifo(target)
    elif kind == "dir":
        target = tmp_path / "m.npz"
        target.mkdir()
    else:
        target = "/dev/null"
    t0 = time.monotonic()
    with pytest.raises(ValueError, match="not a regular file|is a folder|a FIFO|device"):
        cg.save(target)
    assert time.monotonic() - t0 < 5


def test_check_target_refuses_inputs_and_bad_names(tmp_path):
    data = tmp_path / "in.txt"
    data.write_text("x")
    with pytest.raises(ValueError, match="is also the INPUT"):
        check_target(data, "-o", inputs=[("INPUT", str(data))])
    hard = tmp_path / "hard.txt"
    os.link(data, hard)
    with pytest.raises(ValueError, match="is also the INPUT"):
        check_target(hard, "-o", inputs=[("INPUT", str(data))])
    for bad, error in (("", ValueError), (None, TypeError), (3, TypeError),
                       (str(tmp_path / "in.txt" / "x"), ValueError)):
        with pytest.raises(error):
            check_target(bad)


@pytest.mark.parametrize("planted", [".countgrid-partial.npz", ".countgrid-partial", ".part"])
def test_names_planted_beside_the_output_are_never_written(tmp_path, fitted, planted):
    """0.2.0.dev0 wrote through fixed names next to the output, which followed a
    symlink planted there."""
    cg, X = fitted
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    for out in ("m.npz", "map.html", "corpus.npz"):
        (tmp_path / (out + planted)).symlink_to(victim)
        (tmp_path / (os.path.splitext(out)[0] + planted)).unlink(missing_ok=True)
        (tmp_path / (os.path.splitext(out)[0] + planted)).symlink_to(victim)
    cg.save(tmp_path / "m.npz")
    maps.write_html(cg, tmp_path / "map.html", X)
    Corpus(X, [f"w{i}" for i in range(20)]).save(tmp_path / "corpus.npz")
    assert victim.read_text() == "precious"


def test_concurrent_writers_leave_one_complete_file(tmp_path):
    """Two processes save different models to one path 30 times each while a third loads
    it: every load succeeds (never a damaged file) and the last file is one of the two."""
    path = tmp_path / "m.npz"
    writer = textwrap.dedent(f"""
        import sys, numpy as np, countgrid
        k = int(sys.argv[1])
        est = countgrid.PLSA(k, random_state=0)
        est.components_ = np.full((k, 50), 1 / 50); est.n_features_in_ = 50
        est.doc_topic_ = np.full((10, k), 1 / k); est.log_likelihood_ = np.zeros(2)
        est.beta_, est.n_iter_, est.converged_ = 1.0, 1, True
        for _ in range(30):
            est.save({str(path)!r})
    """)
    countgrid.PLSA(2).save(path)
    procs = [subprocess.Popen([sys.executable, "-c", writer, str(k)]) for k in (2, 3)]
    loads = 0
    while any(p.poll() is None for p in procs):
        countgrid.load(path)                    # raises if a file is ever damaged
        loads += 1
    assert all(p.wait() == 0 for p in procs)
    assert countgrid.load(path).components_.shape[0] in (2, 3)
    assert loads > 0
    assert sorted(os.listdir(tmp_path)) == ["m.npz"]


def test_an_interrupted_save_leaves_nothing(tmp_path, fitted):
    cg, _ = fitted
    path = tmp_path / "m.npz"
    path.write_bytes(b"old")

    def stop(*a):
        raise KeyboardInterrupt
    old = signal.signal(signal.SIGALRM, stop)
    try:
        with pytest.raises(KeyboardInterrupt):
            with atomic_write(path) as fh:
                fh.write(b"partial")
                signal.setitimer(signal.ITIMER_REAL, 0.05)
                time.sleep(5)
    finally:
        signal.signal(signal.SIGALRM, old)
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["m.npz"]


def test_every_writer_of_the_package_goes_through_atomic_write():
    """No module writes a file any other way (docs/security.md, "Writing")."""
    import re
    root = os.path.dirname(countgrid.__file__)
    pattern = re.compile(r"open\([^)]*['\"][wax]b?['\"]|\.write_text\(|\.write_bytes\(|"
                         r"savez(_compressed)?\((?!fh)|save_npz\((?!fh)|savefig\((?!fh)")
    offenders = []
    writer = os.path.join(root, "_utils", "atomic.py")
    assert os.path.isfile(writer)
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if not name.endswith(".py") or path == writer:
                continue
            for number, line in enumerate(open(path, encoding="utf-8"), 1):
                code = line.split("#")[0]
                if pattern.search(code) and ">>>" not in line and "..." not in line \
                        and "# the caller's file object" not in line:
                    offenders.append(f"{os.path.relpath(path, root)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


# ------------------------------------------------------------------ the command line
def test_the_output_may_not_be_an_input(tmp_path, docs):
    res = run(["fit", str(docs), "-o", str(tmp_path / "m.npz"), *SMALL], tmp_path)
    assert res.returncode == 0, res.stderr
    before = docs.read_bytes()
    res = run(["transform", "m.npz", str(docs), "-o", str(docs)], tmp_path)
    assert res.returncode == 2 and "is also the INPUT" in res.stderr, res.stderr
    assert docs.read_bytes() == before
    model = (tmp_path / "m.npz").read_bytes()
    for verb, name in (("top-words", "m.txt"), ("html", "m.html"), ("plot", "m.png")):
        (tmp_path / name).write_bytes(model)        # a model file under another name
        res = run([verb, name, "-o", name], tmp_path)
        assert res.returncode == 2 and f"is also the MODEL {name}" in res.stderr, res.stderr
        assert (tmp_path / name).read_bytes() == model


def test_a_fifo_output_is_refused_without_blocking(tmp_path, docs):
    os.mkfifo(tmp_path / "out.npz")
    t0 = time.monotonic()
    res = run(["fit", str(docs), "-o", "out.npz", *SMALL], tmp_path, timeout=60)
    assert res.returncode == 2 and "FIFO" in res.stderr and TRACEBACK not in res.stderr
    assert time.monotonic() - t0 < 60


def test_the_command_line_replaces_a_symlinked_output(tmp_path, docs):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "m.npz").symlink_to(victim)
    for name in ("m.npz.countgrid-partial.npz", "m.countgrid-partial.npz"):
        (tmp_path / name).symlink_to(victim)
    res = run(["fit", str(docs), "-o", "m.npz", *SMALL], tmp_path)
    assert res.returncode == 0, res.stderr
    assert victim.read_text() == "precious"
    assert isinstance(countgrid.load(tmp_path / "m.npz"), countgrid.CountingGrid)


def test_concurrent_command_lines_leave_one_complete_file(tmp_path, docs):
    procs = [subprocess.Popen([sys.executable, "-m", "countgrid.cli", "fit", str(docs), "-o",
                               "m.npz", *SMALL, "--seed", str(seed)], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for seed in (0, 1, 2)]
    assert all(p.wait(timeout=300) == 0 for p in procs)
    assert isinstance(countgrid.load(tmp_path / "m.npz"), countgrid.CountingGrid)
    assert sorted(os.listdir(tmp_path)) == ["docs.txt", "m.npz"]


def test_io_save_of_an_unwritable_folder_is_an_oserror(tmp_path, fitted):
    cg, _ = fitted
    with pytest.raises(OSError):
        cg.save(tmp_path / "missing" / "m.npz")
    threading.Thread  # noqa: B018 - keep the import for the module's other tests
    assert io.save is not None


def test_atomic_files_replace_a_set_of_files_only_as_a_whole(tmp_path):
    """Several files (the shards of a folder) are moved into place together once all are
    written: a failure at the third leaves the first two targets as they were."""
    from countgrid._utils.atomic import atomic_files
    names = ["a.bin", "b.bin", "c.bin"]
    for name in names:
        (tmp_path / name).write_bytes(b"old " + name.encode())
    with pytest.raises(OSError, match="No space left"):
        with atomic_files() as write:
            for name in names:
                with write(tmp_path / name) as fh:
                    fh.write(b"new")
                    if name == "c.bin":
                        raise OSError(errno.ENOSPC, "No space left on device")
    assert {n: (tmp_path / n).read_bytes() for n in names} == {
        n: b"old " + n.encode() for n in names}
    assert sorted(os.listdir(tmp_path)) == names                 # no temporary file left
    with atomic_files() as write:
        for name in names:
            with write(tmp_path / name, "w") as fh:
                fh.write("new " + name)
    assert [(tmp_path / n).read_text() for n in names] == ["new " + n for n in names]
    assert sorted(os.listdir(tmp_path)) == names
