"""How the executors of one barrier stage form a Gloo group: through the barrier context.

The Gloo communicator plugin (libnnrt-comm-gloo.so) meets its peers through Gloo's FileStore, a
folder where each rank writes its addresses as a file and waits for the others' files. Each
executor gives the plugin a folder of its own and mirrors it: the file its rank wrote goes to every
other task with one BarrierTaskContext.allGather, and theirs are written in beside it. So the
rendezvous needs no shared file system and no transport of its own: Spark's barrier RPC carries a
few hundred bytes per rank (in about a second: Spark polls), and Gloo's TCP pairs carry everything
after it. One exchange is enough because a rank writes its addresses without waiting for anyone
(the plugin keeps Gloo's host-name keys to itself; see comm_gloo.cpp).
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
import threading
import time
from typing import Any, Dict, Optional


def _complete_files(folder: str) -> Dict[str, bytes]:
    """The files Gloo finished writing: it writes a dot-file and renames it."""
    out = {}
    for name in os.listdir(folder):
        if not name.startswith("."):
            with open(os.path.join(folder, name), "rb") as f:
                out[name] = f.read()
    return out


class BarrierRendezvous:
    """Sets the Gloo plugin's environment for this task, and while the trainer is being created
    (nnrt_trainer_create joins the group), mirrors the store folder through the barrier context.

        with BarrierRendezvous(barrier_context, timeout_s) as rendezvous:
            trainer = model.trainer(distributed={"comm": "gloo"}, ...)

    Every task calls allGather exactly once, also when its own trainer creation failed before
    writing anything (it then sends nothing, and the others' rendezvous fails on their timeout
    instead of hanging)."""

    def __init__(self, barrier: Any, timeout_s: float):
        self._barrier = barrier
        self._timeout_s = timeout_s
        infos = barrier.getTaskInfos()
        self.rank = barrier.partitionId()
        self.size = len(infos)
        self.host = infos[self.rank].address.rsplit(":", 1)[0]
        self._folder = tempfile.mkdtemp(prefix="nnrt-gloo-")
        self._created = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self.error: Optional[BaseException] = None

    def __enter__(self) -> "BarrierRendezvous":
        os.environ.update({"NNRT_GLOO_RANK": str(self.rank), "NNRT_GLOO_SIZE": str(self.size),
                           "NNRT_GLOO_STORE": self._folder, "NNRT_GLOO_HOSTNAME": self.host,
                           "NNRT_GLOO_PREFIX": "spark"})
        self._thread = threading.Thread(target=self._mirror, name="nnrt-gloo-rendezvous", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._created.set()
        assert self._thread is not None
        self._thread.join(self._timeout_s + 30)
        for key in ("NNRT_GLOO_RANK", "NNRT_GLOO_SIZE", "NNRT_GLOO_STORE", "NNRT_GLOO_HOSTNAME", "NNRT_GLOO_PREFIX"):
            os.environ.pop(key, None)
        shutil.rmtree(self._folder, ignore_errors=True)

    def _mirror(self) -> None:
        # This rank's file, or none if its trainer creation ended (failed) without writing one.
        deadline = time.monotonic() + self._timeout_s
        mine: Dict[str, bytes] = {}
        while not mine and not self._created.is_set() and time.monotonic() < deadline:
            time.sleep(0.005)
            mine = _complete_files(self._folder)
        payload = json.dumps({k: base64.b64encode(v).decode() for k, v in mine.items()})
        try:
            replies = self._barrier.allGather(payload)
        except BaseException as e:  # noqa: BLE001 - reported by the task
            self.error = e
            return
        for rank, reply in enumerate(replies):
            if rank == self.rank:
                continue
            for name, data in json.loads(reply).items():
                if "/" in name or name.startswith(".") or name in mine:
                    continue  # never outside the folder, never over a file Gloo wrote
                tmp = os.path.join(self._folder, f".mirror.{name}")
                with open(tmp, "wb") as f:
                    f.write(base64.b64decode(data))
                os.replace(tmp, os.path.join(self._folder, name))
