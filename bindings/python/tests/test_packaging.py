"""The wheel builds offline with the standard tools, installs into a fresh virtualenv, finds libnnrt
(also a bundled copy), and the README's example runs."""
import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

import nnrt

HERE = os.path.dirname(os.path.abspath(__file__))
BINDING = os.path.dirname(HERE)
README = os.path.join(BINDING, "..", "..", "README.md")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The wheel built from a copy of this folder (building in place would leave build/ and
    *.egg-info here), installed by pip into a fresh virtualenv that sees the system's NumPy:
    (wheel path, the virtualenv's python, its site-packages)."""
    for module in ("pip", "setuptools", "wheel", "venv", "ensurepip"):
        if subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode:
            pytest.skip(f"{sys.executable} has no {module} to build and install a wheel with "
                        "(Debian: python3-pip python3-setuptools python3-wheel python3-venv)")
    root = tmp_path_factory.mktemp("wheel")
    source = root / "src"
    shutil.copytree(BINDING, source, ignore=shutil.ignore_patterns("tests", "tests_spark", "__pycache__", "build", "*.egg-info",
                                                                   "lib"))
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w",
                            str(root / "dist"), str(source)], env=env, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    wheels = list((root / "dist").glob("nnrt-*.whl"))
    assert len(wheels) == 1
    venv = root / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], capture_output=True,
                          text=True, timeout=300)
    assert made.returncode == 0, made.stdout + made.stderr
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", str(wheels[0])], env=env,
                             capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, timeout=60).stdout.strip()
    return wheels[0], python, site


def run_python(python, code, env, cwd):
    return subprocess.run([str(python), "-c", code], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_the_wheel_is_pure_python_and_typed(installed):
    wheel, _, _ = installed
    assert wheel.name == "nnrt-0.1.0-py3-none-any.whl"
    names = zipfile.ZipFile(wheel).namelist()
    assert "nnrt/__init__.py" in names and "nnrt/py.typed" in names
    assert "nnrt/spark/__init__.py" in names  # imported only where PySpark is
    assert not any(n.endswith(".so") or "tests/" in n for n in names)


def test_the_installed_wheel_finds_libnnrt_through_nnrt_lib_dir(installed, tmp_path):
    _, python, site = installed
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["NNRT_LIB_DIR"] = os.path.dirname(nnrt.library_path())
    out = run_python(python, "import nnrt; print(nnrt.__file__); print(nnrt.library_path()); "
                     "print(nnrt.Context(backend='reference').backend)", env, tmp_path)
    assert out.returncode == 0, out.stderr
    file, lib, backend = out.stdout.split()
    assert file.startswith(site) and lib == nnrt.library_path() and backend == "reference"


def test_an_installed_library_is_found_through_pkg_config(installed, tmp_path):
    if shutil.which("pkg-config") is None:
        pytest.skip("no pkg-config (Debian: pkg-config)")
    _, python, _ = installed
    libdir = tmp_path / "prefix" / "lib"
    libdir.mkdir(parents=True)
    (libdir / "libnnrt.so.1").symlink_to(os.path.realpath(nnrt.library_path()))
    (libdir / "pkgconfig").mkdir()
    (libdir / "pkgconfig" / "nnrt.pc").write_text(
        f"prefix={tmp_path / 'prefix'}\nlibdir=${{prefix}}/lib\n\n"
        "Name: nnrt\nDescription: nnrt\nVersion: 0.1.0\nLibs: -L${libdir} -lnnrt\n")
    env = {k: v for k, v in os.environ.items() if k not in ("NNRT_LIB_DIR", "LD_LIBRARY_PATH", "PYTHONPATH")}
    env["PKG_CONFIG_PATH"] = str(libdir / "pkgconfig")
    out = run_python(python, "from nnrt import _capi; lib = _capi.lib(); print(lib.how); print(lib.path)", env,
                     tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["pkg-config", str(libdir / "libnnrt.so.1")], out.stdout


def test_a_bundled_library_is_found_without_any_setting(installed, tmp_path):
    _, python, site = installed
    bundled = tmp_path / "bundled"
    shutil.copytree(os.path.join(site, "nnrt"), bundled / "nnrt")
    (bundled / "nnrt" / "lib").mkdir()
    shutil.copy(os.path.realpath(nnrt.library_path()), bundled / "nnrt" / "lib" / "libnnrt.so.1")
    env = {k: v for k, v in os.environ.items() if k not in ("NNRT_LIB_DIR", "LD_LIBRARY_PATH", "PKG_CONFIG_PATH")}
    env["PYTHONPATH"] = str(bundled)
    out = run_python(python, "import nnrt; from nnrt import _capi; lib = _capi.lib(); print(lib.how); "
                     "print(lib.path); print(nnrt.Context(backend='reference').backend)", env, tmp_path)
    assert out.returncode == 0, out.stderr
    how, path, backend = out.stdout.strip().split("\n")
    if how in ("pkg-config", "the system loader", "ctypes.util.find_library"):
        pytest.skip(f"an installed libnnrt is found first, through {how}")
    assert how == "the copy bundled with the package" and path.startswith(str(bundled)), out.stdout
    assert backend == "reference"


def test_the_readme_example_runs(tmp_path):
    if not os.path.exists(README):
        pytest.skip("not in a checkout: no README.md two folders up")
    with open(README, encoding="utf-8") as f:
        text = f.read()
    section = re.search(r"^## Python\n(.*?)(?=^## )", text, re.S | re.M)
    assert section, "README.md has no '## Python' section"
    code = re.search(r"```python\n(.*?)```", section.group(1), re.S)
    assert code, "the Python section has no python code block"
    env = dict(os.environ, PYTHONPATH=BINDING, NNRT_LIB_DIR=os.path.dirname(nnrt.library_path()))
    out = run_python(sys.executable, code.group(1), env, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    accuracy = re.search(r"accuracy (\d\.\d+)", out.stdout)
    assert accuracy and float(accuracy.group(1)) > 0.9, out.stdout
