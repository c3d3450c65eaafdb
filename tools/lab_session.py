"""A notebook run in a real, headless JupyterLab, driven from Chromium (Playwright).

Used by the widget's tests (tests/maps/test_widget_lab.py), its benchmark
(benchmarks/bench_widget.py) and the docs' picture of it (tools/make_doc_images.py):

    with LabSession(folder, browser) as lab:      # a server on a free local port
        lab.run_notebook([cell, ...])             # written, opened and run
        frame = lab.map_frame()                   # the widget's map, documents read
        lab.kernel("print(w.selection)")          # code run in the notebook's kernel

The server keeps its settings, runtime files and workspaces in ``folder`` (nothing in the
user's home); the token is random; the app is exposed to the page
(``--LabApp.expose_app_in_browser``) so that the session can run code in the notebook's
kernel through ``jupyterapp``.
"""
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request

START_SECONDS = 120

KERNEL_RUN = """async (code) => {
  const kernel = jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  let out = "";
  const future = kernel.requestExecute({ code, store_history: false });
  future.onIOPub = (msg) => {
    const t = msg.header.msg_type;
    if (t === "stream") out += msg.content.text;
    else if (t === "error") out += "ERROR " + msg.content.ename + ": " + msg.content.evalue;
  };
  await future.done;
  return out;
}"""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def notebook(cells):
    """A notebook (nbformat 4 as a dict) of code cells, on the python3 kernel."""
    return {"nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                        "language": "python"}},
            "cells": [{"cell_type": "code", "id": f"c{k}", "metadata": {},
                       "execution_count": None, "outputs": [], "source": src}
                      for k, src in enumerate(cells)]}


class LabSession:
    """A JupyterLab server in ``folder`` and a Chromium page on it.

    Parameters
    ----------
    folder : pathlib.Path
        The server's root (the notebook and the files it reads go there) and home of its
        settings.
    browser : playwright Browser
    width, height : int
        The page's viewport.
    """

    def __init__(self, folder, browser, width=1300, height=900):
        self.root, self.browser = folder, browser
        self.width, self.height = width, height
        self.proc = self.page = self._log = None
        self.errors = []

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def start(self):
        token, port = secrets.token_hex(16), _free_port()
        env = dict(os.environ)
        for var, sub in (("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTER_CONFIG_DIR", "config"),
                         ("JUPYTERLAB_SETTINGS_DIR", "settings"),
                         ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
                         ("IPYTHONDIR", "ipython")):
            env[var] = str(self.root / ".lab" / sub)
        # no news toast over the notebook
        settings = self.root / ".lab" / "settings" / "@jupyterlab" / "apputils-extension"
        settings.mkdir(parents=True, exist_ok=True)
        (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
        # the kernel runs this Python, and imports what this process imports
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        self._log = open(self.root / ".lab" / "lab.log", "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
             "--ip=127.0.0.1", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={self.root}",
             "--ServerApp.allow_root=True", "--LabApp.expose_app_in_browser=True",
             # nothing from the network (CI machines may have none)
             "--LabApp.extension_manager=readonly", "--LabApp.news_url=",
             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
            cwd=self.root, env=env, stdout=self._log, stderr=subprocess.STDOUT)
        self.base, self.token = f"http://127.0.0.1:{port}", token
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                with urllib.request.urlopen(f"{self.base}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    log = self.log()
                    self.close()
                    raise RuntimeError("JupyterLab did not start:\n" + log[-3000:])
                time.sleep(0.3)
        self.page = self.browser.new_page(viewport={"width": self.width,
                                                    "height": self.height})
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def log(self):
        path = self.root / ".lab" / "lab.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def run_notebook(self, cells, name="widget.ipynb"):
        """Write the notebook, open it in the lab, wait for its kernel, run every cell
        (without waiting for them to finish)."""
        (self.root / name).write_text(json.dumps(notebook(cells)), encoding="utf-8")
        self.page.goto(f"{self.base}/lab/tree/{name}?token={self.token}&reset")
        self.page.wait_for_function(
            "window.jupyterapp && jupyterapp.shell.currentWidget && "
            "jupyterapp.shell.currentWidget.sessionContext && "
            "jupyterapp.shell.currentWidget.sessionContext.session && "
            "jupyterapp.shell.currentWidget.sessionContext.session.kernel",
            timeout=START_SECONDS * 1000, polling=200)
        self.page.evaluate("async () => { await jupyterapp.shell.currentWidget"
                           ".sessionContext.ready; }")
        self.page.evaluate("jupyterapp.commands.execute('notebook:run-all-cells')")

    def map_frame(self, timeout=90):
        """The frame of the first widget's map once it has read its documents and is in
        view (not a preview, nor the whole map still loading behind one)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for frame in self.page.frames:
                if frame is self.page.main_frame:
                    continue
                try:
                    if frame.evaluate("!!(window.countgridMap && countgridMap.ready && "
                                      "countgridMap.host && countgridMap.shown)"):
                        return frame
                except Exception:        # a frame navigating or detached
                    continue
            # not time.sleep: Playwright's sync API reads the browser's messages only
            # inside its own calls, and a browser whose messages (a websocket frame of
            # tens of MB) are not read stalls
            self.page.wait_for_timeout(50)
        raise AssertionError("the widget's map did not open in JupyterLab; the notebook "
                             "shows:\n" + self.page.evaluate(
                                 "(document.querySelector('.jp-Notebook') || document.body)"
                                 ".innerText.slice(0, 3000)") +
                             "\nthe server's log ends:\n" + self.log()[-2000:])

    def kernel(self, code):
        """Run ``code`` in the notebook's kernel; its standard output (an error raises)."""
        out = self.page.evaluate(KERNEL_RUN, code)
        if out.startswith("ERROR"):
            raise AssertionError(out)
        return out

    def close(self):
        if self.page is not None:
            self.page.close()
            self.page = None
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None
