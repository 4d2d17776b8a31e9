"""What a packaged dataset asks to be cited as: the benchmark design it follows (PDEAgent-Bench, the
anchor) and the tool that built it (casekit), as BibTeX for the dataset card."""

from __future__ import annotations

#: PDEAgent-Bench (arXiv 2605.09636): the design and the 645 records casekit's reference dataset repairs
ANCHOR = """@misc{hang2026pdeagentbench,
  title         = {{PDEAgent-Bench}: A Multi-Metric, Multi-Library Benchmark for {PDE} Solver Generation},
  author        = {Hang, Zhen and Yashengjiang, Yushan and Li, Junhui and Dong, Huanshuo and Wei, Yang and
                   Hao, Zhezheng and Ma, Jiangtao and Bai, Songlin and Kai, Haozhong and Yue, Xihang and
                   Si, Gangzong and Jiang, Dongming and Yao, Chao and Hu, Zhanhua and Zhang, Jiangqing and
                   Liu, Pengwei and Shen, Yaomin and Ren, Xingyu and Liu, Lei and Xu, Zikang and Li, Han and
                   Yao, Qingsong and Dong, Hande and Wang, Hong},
  year          = {2026},
  eprint        = {2605.09636},
  archivePrefix = {arXiv},
  primaryClass  = {cs.AI},
  url           = {https://arxiv.org/abs/2605.09636}
}"""


def casekit_entry() -> str:
    """casekit, at the version that packaged the dataset."""
    from casekit import __version__

    return f"""@software{{casekit,
  title   = {{casekit: building, validating, packaging and scoring benchmarks in which {{AI}} agents write
             finite-element solvers for {{PDEs}}}},
  version = {{{__version__}}},
  note    = {{The tool that built, validated and packaged this dataset}}
}}"""


def bibtex() -> str:
    """The card's BibTeX: the anchor, then casekit."""
    return f"{ANCHOR}\n\n{casekit_entry()}"
