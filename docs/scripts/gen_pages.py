"""Pages made at build time by mkdocs-gen-files: the command-line reference, read from
the argparse parsers, and the pictures the pages show, copied from where their scripts
write them (so no picture is kept twice in the repository)."""

import shutil
import sys
from pathlib import Path

import mkdocs_gen_files

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
from cli_reference import cli_reference  # noqa: E402

PICTURES = {
    "pictures/minilm_flies_head_view.png": "notebooks/pictures/minilm_flies_head_view.png",
    "pictures/translation_history.png": "bench/results/translation_history.png",
    "pictures/language_model_history.png": "bench/results/language_model_history.png",
}

with mkdocs_gen_files.open("reference/cli.md", "w") as page:
    page.write(cli_reference())
for virtual, source in PICTURES.items():
    with mkdocs_gen_files.open(virtual, "wb") as picture:
        shutil.copyfileobj((ROOT / source).open("rb"), picture)
