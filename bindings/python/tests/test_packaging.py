"""The wheel builds offline with the standard tools, installs, finds libnnrt (also a bundled copy),
and the README's example runs."""
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


def run_python(code, env, cwd):
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The wheel built from a copy of this folder (building in place would leave build/ and
    *.egg-info here), installed with pip into a folder of its own: (wheel path, site folder)."""
    for module in ("pip", "setuptools", "wheel"):
        if subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode:
            pytest.skip(f"{sys.executable} has no {module} to build a wheel with (Debian: python3-{module})")
    root = tmp_path_factory.mktemp("wheel")
    source = root / "src"
    shutil.copytree(BINDING, source, ignore=shutil.ignore_patterns("tests", "__pycache__", "build", "*.egg-info",
                                                                   "lib"))
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w",
                            str(root / "dist"), str(source)], env=env, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    wheels = list((root / "dist").glob("nnrt-*.whl"))
    assert len(wheels) == 1
    site = root / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(site),
                              str(wheels[0])], env=env, capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    return wheels[0], site


def test_the_wheel_is_pure_python_and_typed(installed):
    wheel, _ = installed
    assert wheel.name == "nnrt-0.1.0-py3-none-any.whl"
    names = zipfile.ZipFile(wheel).namelist()
    assert "nnrt/__init__.py" in names and "nnrt/py.typed" in names
    assert not any(n.endswith(".so") or "tests/" in n for n in names)


def test_the_installed_wheel_finds_libnnrt_through_nnrt_lib_dir(installed, tmp_path):
    _, site = installed
    env = dict(os.environ, PYTHONPATH=str(site), NNRT_LIB_DIR=os.path.dirname(nnrt.library_path()))
    out = run_python("import nnrt; print(nnrt.__file__); print(nnrt.library_path()); "
                     "print(nnrt.Context(backend='reference').backend)", env, tmp_path)
    assert out.returncode == 0, out.stderr
    file, lib, backend = out.stdout.split()
    assert file.startswith(str(site)) and lib == nnrt.library_path() and backend == "reference"


def test_a_bundled_library_is_found_without_any_setting(installed, tmp_path):
    _, site = installed
    bundled = tmp_path / "site"
    shutil.copytree(site, bundled)
    (bundled / "nnrt" / "lib").mkdir()
    shutil.copy(os.path.realpath(nnrt.library_path()), bundled / "nnrt" / "lib" / "libnnrt.so.1")
    env = {k: v for k, v in os.environ.items() if k not in ("NNRT_LIB_DIR", "LD_LIBRARY_PATH", "PKG_CONFIG_PATH")}
    env["PYTHONPATH"] = str(bundled)
    out = run_python("import nnrt; from nnrt import _capi; lib = _capi.lib(); print(lib.how); print(lib.path); "
                     "print(nnrt.Context(backend='reference').backend)", env, tmp_path)
    assert out.returncode == 0, out.stderr
    how, path, backend = out.stdout.strip().split("\n")
    if how == "the system loader":
        pytest.skip("an installed libnnrt.so.1 is found first")
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
    out = run_python(code.group(1), env, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    accuracy = re.search(r"accuracy (\d\.\d+)", out.stdout)
    assert accuracy and float(accuracy.group(1)) > 0.9, out.stdout
