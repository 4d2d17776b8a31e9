"""deal.II 9.4 from Debian's packages (with PETSc, Trilinos, UMFPACK, gmsh, p4est)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from casekit.envs.base import ENVIRONMENTS, Environment, EnvStatus, Step

PACKAGES = ("libdeal.ii-dev", "cmake", "g++", "make")
CONFIG = Path("/usr/share/cmake/deal.II/deal.IIConfig.cmake")


def _installed(package: str) -> bool:
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True)
    return r.returncode == 0 and "install ok installed" in r.stdout


def version() -> str | None:
    r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libdeal.ii-dev"], capture_output=True, text=True)
    return r.stdout.strip() or None if r.returncode == 0 else None


class DealII(Environment):
    name = "dealii"
    description = "deal.II 9.4 from Debian (apt-get install libdeal.ii-dev, about 2.2 GB)"
    image = "casekit/dealii:9.4"

    def steps(self) -> list[Step]:
        apt = "apt-get" if os.geteuid() == 0 else "sudo apt-get"
        return [
            Step("apt-update", (f"{apt} update -qq",), done=lambda: all(_installed(p) for p in PACKAGES)),
            Step("apt-install", (f"{apt} install -y -qq --no-install-recommends " + " ".join(PACKAGES),),
                 done=lambda: all(_installed(p) for p in PACKAGES)),
        ]

    def check(self) -> EnvStatus:
        missing = [p for p in PACKAGES if not _installed(p)]
        if missing:
            return EnvStatus(self.name, False, f"Debian packages missing: {', '.join(missing)}",
                             {"install": "casekit env install dealii"})
        if not CONFIG.exists():
            return EnvStatus(self.name, False, f"{CONFIG} is missing")
        return EnvStatus(self.name, True, details={"deal.II": version(), "cmake_config": str(CONFIG)})


ENVIRONMENTS.register("dealii", DealII())
