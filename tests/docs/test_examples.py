"""Every example of the docs runs: each page's ``bash`` and ``python`` blocks in order, in
a working folder of its own laid out as the pages assume (`example_workspace`), and the
``Examples:`` of every public name's docstring, by doctest.

The runs are the ``docs_examples`` stage of ``.ci/run`` (``pytest --docs-examples -m
docs_examples``): they start a ``kerasformer`` process per command and train on tiny data
for minutes in all, so the suite's own run leaves them out (tests/README.md). What every
block does with CI (runs, has a twin, is covered by another test) is checked in the suite.
"""

from __future__ import annotations

import doctest
import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.example_workspace import write_workspace
from tests.docs.examples import (
    NOT_RUN_REASONS,
    PAGES,
    ROOT,
    all_examples,
    page_examples,
    starting_files,
)
from tests.docs.public_api import public_names
from tests.helpers.made_once import made_once

EXAMPLES = all_examples()


def test_the_pages_have_examples_and_each_runs_or_says_why():
    assert len(EXAMPLES) > 40
    for example in EXAMPLES:
        if example.directive == "not run":
            assert example.argument in NOT_RUN_REASONS, example.name
        elif example.directive == "covered by":
            test_files = [ROOT / name for name in example.argument.split()]
            assert all(path.is_file() for path in test_files), example.name
            named = "".join(path.read_text("utf-8") for path in test_files)
            scripts = [p for p in example.programs() if p.startswith("bench/")]
            missing = [p for p in scripts if p.removeprefix("bench/") not in named]
            assert not missing, f"{example.name}: {example.argument} does not run {missing}"
        elif example.directive == "twin":
            twin = example.programs(example.argument)
            commands = {p for p in example.programs() if p.startswith("kerasformer")}
            # A twin may convert the tiny BERT its block's pretrained encoder stands for.
            allowed = example.programs() | {"kerasformer convert-bert"}
            assert commands <= twin <= allowed, (
                f"{example.name}: a twin runs the block's kerasformer commands, no others"
            )
        assert example.runs() is None or example.runs().strip(), example.name


@pytest.fixture(scope="session")
def example_workspace(tmp_path_factory) -> Path:
    """`write_workspace`'s folder, made once for every worker (about a minute)."""
    return made_once(tmp_path_factory, "docs_example_workspace", write_workspace)


def copy_of_the_workspace(example_workspace: Path, tmp_path: Path, made=True) -> Path:
    """A fresh copy of the workspace's ``user/`` folder, ``../shared`` beside it; without
    its exports and conversions (``saved_models/``, ``hub/``) unless ``made``."""
    (tmp_path / "shared").symlink_to(example_workspace / "shared")
    user = tmp_path / "user"
    ignore = None if made else shutil.ignore_patterns("saved_models", "hub")
    shutil.copytree(example_workspace / "user", user, symlinks=True, ignore=ignore)
    return user


@pytest.fixture
def working_folder(example_workspace, tmp_path) -> Path:
    """What the docstrings' examples run in: the whole workspace, exports included."""
    return copy_of_the_workspace(example_workspace, tmp_path)


def fresh_folder(example_workspace: Path, tmp_path: Path, page: Path) -> Path:
    """The workspace's ``user/`` folder as a page's examples start from it: the data files,
    and of the exports and conversions only those the page names."""
    user = copy_of_the_workspace(example_workspace, tmp_path, made=False)
    for name in starting_files(page):
        source = example_workspace / "user" / name
        assert source.exists(), f"{page}: the workspace has no {name}"
        copy = shutil.copytree if source.is_dir() else shutil.copy2
        (user / name).parent.mkdir(parents=True, exist_ok=True)
        copy(source, user / name)
    return user


def example_environment(working_folder: Path) -> dict[str, str]:
    return {
        **os.environ,
        # `python` is this interpreter, `kerasformer` its console script.
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
        "KERASFORMER_EXAMPLE_BERT": str(working_folder.parent / "shared" / "bert"),
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "MPLBACKEND": "Agg",
    }


RUN_PAGES = [page for page in PAGES if any(e.runs() for e in page_examples(page))]


@pytest.mark.docs_examples
@pytest.mark.slow
@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_page_examples_run_in_order(page, example_workspace, tmp_path):
    working_folder = fresh_folder(example_workspace, tmp_path, page)
    environment = example_environment(working_folder)
    for number, example in enumerate(page_examples(page)):
        code = example.runs()
        if code is None:
            continue
        if example.language == "python":
            script = tmp_path / f"example_{number}.py"  # beside the folder, not in it
            script.write_text(code, "utf-8")
            command = [sys.executable, str(script)]
        else:
            command = ["bash", "-e", "-o", "pipefail", "-c", code]
        result = subprocess.run(
            command, cwd=working_folder, env=environment, capture_output=True, text=True,
            timeout=900,
        )  # fmt: skip
        assert result.returncode == 0, (
            f"{example.name} exited {result.returncode}:\n{code}\n{result.stderr[-4000:]}"
        )


def public_object(path: str):
    module_name, name = path.rsplit(".", 1)
    module = importlib.import_module(module_name)
    return module, getattr(module, name)


# Classes and functions: constants have their docstrings only in the source (griffe reads
# them there), and no examples.
CALLABLES = sorted(
    path for path in set(public_names().values()) if callable(public_object(path)[1])
)


def docstring_examples(path: str) -> list[doctest.DocTest]:
    module, obj = public_object(path)
    finder = doctest.DocTestFinder(recurse=False)
    name = path.rsplit(".", 1)[1]
    return finder.find(obj, name, module=module, globs=vars(module).copy())


@pytest.mark.docs_examples
@pytest.mark.slow
@pytest.mark.parametrize("path", CALLABLES)
def test_docstring_examples_run(path, working_folder, monkeypatch):
    monkeypatch.chdir(working_folder)
    for name, value in example_environment(working_folder).items():
        monkeypatch.setenv(name, value)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    runner = doctest.DocTestRunner(optionflags=flags)
    tests = docstring_examples(path)
    assert sum(len(test.examples) for test in tests) > 0, f"{path} has no >>> example"
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, f"{path}: {runner.failures} example lines failed (above)"
