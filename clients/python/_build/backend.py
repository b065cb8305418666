"""The build backend of locator-client (PEP 517, in the tree: backend-path).

The client is the standard library alone, and so is its build: pip needs
nothing from a package index to install it (`requires = []`), so that
`pip install ./clients/python` works on a machine with no network. It builds
one pure-Python wheel (PEP 427) from pyproject.toml's [project] table, an
editable one (PEP 660: a .pth naming this folder), and an sdist.
"""

import base64
import hashlib
import io
import os
import tarfile
import zipfile

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "locator_client"


def _project():
    if tomllib is None:
        raise RuntimeError("building locator-client needs Python 3.11 or later (tomllib); "
                           "on an older Python, use it from the clone with PYTHONPATH=clients/python")
    with open(os.path.join(HERE, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _names(p):
    dist = p["name"].replace("-", "_")
    return dist, "%s-%s" % (dist, p["version"])


def _metadata(p):
    lines = ["Metadata-Version: 2.1", "Name: " + p["name"], "Version: " + p["version"],
             "Summary: " + p["description"], "License: " + p["license"]["text"],
             "Requires-Python: " + p["requires-python"]]
    lines += ["Classifier: " + c for c in p.get("classifiers", [])]
    lines.append("Description-Content-Type: text/markdown")
    with open(os.path.join(HERE, p["readme"]), encoding="utf-8") as f:
        return "\n".join(lines) + "\n\n" + f.read()


def _sources():
    """The package's files, as (path in the archive, path on disk)."""
    root = os.path.join(HERE, PACKAGE)
    for name in sorted(os.listdir(root)):
        if name.endswith(".py") or name == "py.typed":
            yield PACKAGE + "/" + name, os.path.join(root, name)


def _wheel(wheel_directory, files):
    """Writes a py3-none-any wheel of files (path in the archive, bytes)."""
    p = _project()
    dist, base = _names(p)
    info = base + ".dist-info/"
    files = list(files) + [
        (info + "METADATA", _metadata(p).encode()),
        (info + "WHEEL", b"Wheel-Version: 1.0\nGenerator: locator-client backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record = io.StringIO()
    name = base + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files:
            z.writestr(path, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.write("%s,sha256=%s,%d\n" % (path, digest, len(data)))
        record.write(info + "RECORD,,\n")
        z.writestr(info + "RECORD", record.getvalue())
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = []
    for path, disk in _sources():
        with open(disk, "rb") as f:
            files.append((path, f.read()))
    return _wheel(wheel_directory, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, [(PACKAGE + ".pth", (HERE + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    _, base = _names(p)
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for path in ["pyproject.toml", p["readme"], "_build/backend.py"]:
            t.add(os.path.join(HERE, path), base + "/" + path)
        for path, disk in _sources():
            t.add(disk, base + "/" + path)
        info = _metadata(p).encode()
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size = len(info)
        t.addfile(ti, io.BytesIO(info))
    return name
