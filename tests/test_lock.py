"""The lock (requirements/lock.txt) agrees with pyproject.toml and the conda env, and the
checker catches each way they can drift apart."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("check_lock", ROOT / "scripts" / "check_lock.py")
check_lock = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_lock)

LOCK = """\
# torch: resolved against torch==2.13.0+cpu, installed by the set-up, not pinned here.
numpy==2.4.6 \\
    --hash=sha256:00
    # via
    #   sparling-genomics (pyproject.toml)
    #   scipy
scipy==1.17.1 \\
    --hash=sha256:11
    # via sparling-genomics (pyproject.toml)
filelock==4.3.1 \\
    --hash=sha256:22
    # via torch
"""


def test_the_repository_lock_agrees_with_pyproject_and_the_conda_env():
    assert check_lock.main([]) == 0


def test_every_lock_entry_is_pinned_with_hashes():
    text = check_lock.LOCK.read_text()
    pins, parents, torch = check_lock.read_lock(text)
    assert torch and "torch" not in pins and len(pins) > 50
    assert text.count("==") - 1 == len(pins)  # the header's torch line
    for block in text.split("\n")[4:]:
        if check_lock.PIN.match(block):
            assert block.endswith("\\"), block  # hashes follow every pin


def test_agreeing_requirements_give_no_problem():
    assert check_lock.check_pyproject(LOCK, ["numpy>=1.26", "scipy>=1.11", "torch==2.13.0"]) == []


@pytest.mark.parametrize(
    ("requirements", "expected"),
    [
        (["numpy>=3", "scipy"], "asks for numpy>=3 but the lock pins numpy==2.4.6"),
        (["numpy", "scipy", "h5py>=3"], "the lock has no h5py"),
        (["numpy"], "the lock pins scipy for pyproject.toml, which no longer asks for it"),
        (["numpy", "scipy", "torch==2.14.1"], "resolved against torch==2.13.0"),
    ],
)
def test_a_disagreement_is_named(requirements, expected):
    problems = check_lock.check_pyproject(LOCK, requirements)
    assert len(problems) == 1 and expected in problems[0], problems


def test_freeze_diff_names_each_package():
    freeze = "NumPy==2.4.6\nscipy==1.17.2\nrequests==2.0\ntorch==2.13.0+cu126\n-e /x/y\n"
    problems = check_lock.check_freeze(LOCK, freeze)
    assert problems == [
        "filelock==4.3.1 is locked but not installed",
        "requests==2.0 is installed but not in the lock",
        "scipy==1.17.2 is installed, the lock pins 1.17.1",
    ]
    exact = "numpy==2.4.6\nscipy==1.17.1\nfilelock==4.3.1\ntorch==2.13.0+cpu\n"
    assert check_lock.check_freeze(LOCK, exact) == []
    assert "torch==2.14.1" in check_lock.check_freeze(LOCK, exact.replace("2.13.0", "2.14.1"))[0]


def test_conda_env_pins_are_the_lock_s():
    env = "dependencies:\n  - pip:\n      - -e ../..\n"
    written = check_lock.conda_env(LOCK, env)
    assert written.startswith(env)
    assert "      - torch==2.13.0\n" in written and "      - scipy==1.17.1\n" in written
    assert check_lock.conda_env(LOCK, written) == written  # rewriting is stable


def test_a_cuda_torch_s_own_packages_are_not_flagged():
    """A GPU user's CUDA build of the pinned torch brings nvidia-* wheels the lock (resolved
    against the CPU build) does not name: they belong to torch, and the set-up keeps them."""
    metadata = {
        "torch": ["filelock", "nvidia-cublas-cu12==12.6; platform_system == 'Linux'",
                  "opt-einsum; extra == 'opt-einsum'"],
        "nvidia-cublas-cu12": ["nvidia-cuda-nvrtc-cu12"],
        "nvidia-cuda-nvrtc-cu12": [],
        "filelock": [],
    }  # fmt: skip
    requires = metadata.get
    freeze = ("numpy==2.4.6\nscipy==1.17.1\nfilelock==4.3.1\ntorch==2.13.0+cu126\n"
              "nvidia-cublas-cu12==12.6.4.1\nnvidia-cuda-nvrtc-cu12==12.6.77\n")  # fmt: skip
    assert check_lock.check_freeze(LOCK, freeze, requires) == []
    pins = check_lock.read_lock(LOCK)[0]
    assert check_lock.torch_build_packages(pins, requires) == {
        "torch", "nvidia-cublas-cu12", "nvidia-cuda-nvrtc-cu12"}
    extra = freeze + "requests==2.0\n"
    assert check_lock.check_freeze(LOCK, extra, requires) == [
        "requests==2.0 is installed but not in the lock"]
