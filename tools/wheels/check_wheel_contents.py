"""Checks that repaired countgrid wheels ship what the C/Cython API promises and
vendor their OpenMP runtime.

    python tools/wheels/check_wheel_contents.py wheelhouse/*.whl

For each wheel: the kernel library and every family wrapper, the Cython API, the
public headers, the .pxd files, the static library, and the OpenMP runtime of the platform (libgomp on Linux,
libomp on macOS, vcomp140.dll on Windows); and nothing of the repository's data/ folder
(the 15 MB of real datasets, data/README.md): the only .npz files a wheel holds are the
bundled demo corpus in countgrid/data/.  Exits non-zero if a wheel lacks a part or holds
a file it must not.
"""
import os
import re
import sys
import zipfile

COMMON = [
    (r"^countgrid/_kernels\.[^/]*\.(so|pyd)$", "extension countgrid._kernels"),
    (r"^countgrid/cython_api\.[^/]*\.(so|pyd)$", "extension countgrid.cython_api"),
    (r"^countgrid/grid/_wrappers\.[^/]*\.(so|pyd)$", "extension countgrid.grid._wrappers"),
    (r"^countgrid/topics/_wrappers\.[^/]*\.(so|pyd)$", "extension countgrid.topics._wrappers"),
    (r"^countgrid/kernels/_wrappers\.[^/]*\.(so|pyd)$", "extension countgrid.kernels._wrappers"),
    (r"^countgrid/rap/_wrappers\.[^/]*\.(so|pyd)$", "extension countgrid.rap._wrappers"),
    (r"^countgrid/gtm/_wrappers\.[^/]*\.(so|pyd)$", "extension countgrid.gtm._wrappers"),
    (r"^countgrid/_utils/_cooc\.[^/]*\.(so|pyd)$", "extension countgrid._utils._cooc"),
    (r"^countgrid/cython_api\.pxd$", "Cython declarations cython_api.pxd"),
    (r"^countgrid/include/countgrid/countgrid\.h$", "header countgrid/countgrid.h"),
    (r"^countgrid/include/countgrid/countgrid_api\.h$", "header countgrid/countgrid_api.h"),
    (r"^countgrid/lib/(libcountgrid\.a|countgrid\.lib)$", "static library"),
]
# (pattern, what): files a wheel must not hold
FORBIDDEN = [
    (r"^(?!countgrid/data/news20_3class(_texts)?\.npz$).*\.npz$",
     "an .npz other than the bundled demo corpus"),
    (r"^(.*/)?repo_data\.py$|^data/|SHA256SUMS$", "the repository's data/ folder"),
]
OPENMP = {
    "linux": (r"^countgrid\.libs/libgomp[^/]*\.so[.0-9]*$", "vendored libgomp"),
    "macosx": (r"^countgrid/\.dylibs/libomp\.dylib$", "vendored libomp"),
    "win": (r"^countgrid\.libs/vcomp140[^/]*\.dll$", "vendored vcomp140.dll"),
}


def check(path):
    """(what is missing, what is there and must not be): two lists of strings."""
    names = zipfile.ZipFile(path).namelist()
    tag = os.path.basename(path)[:-len(".whl")].split("-")[-1]
    platform = next((p for p in OPENMP if p in tag), None)
    wanted = list(COMMON)
    if platform is None:
        return [f"a known platform tag (not {tag!r})"], []
    wanted.append(OPENMP[platform])
    missing = [what for pattern, what in wanted
               if not any(re.match(pattern, n) for n in names)]
    extra = [f"{n} ({what})" for pattern, what in FORBIDDEN
             for n in names if re.match(pattern, n)]
    return missing, extra


def main(paths):
    if not paths:
        print(__doc__)
        return 2
    status = 0
    for path in paths:
        missing, extra = check(path)
        if missing or extra:
            status = 1
            if missing:
                print(f"FAIL {path}: missing {', '.join(missing)}")
            if extra:
                print(f"FAIL {path}: must not hold {', '.join(extra)}")
        else:
            print(f"ok   {path}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
