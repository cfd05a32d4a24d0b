#!/usr/bin/env python3
"""A real PyTorch DDP training job for `tiresias serve`: preemptible, and exact on resume.

Trains a small classifier (16 inputs, 64 ReLU hidden units with dropout, 4 classes) with Adam
on a seeded synthetic dataset, data-parallel over WORLD_SIZE ranks (DistributedDataParallel,
gloo, CPU). Each rank draws its own minibatches and dropout masks from its own generators.

On SIGTERM (or SIGINT) every rank finishes its step; the ranks agree (an all-reduce each step)
on the step to stop at, gather their RNG states to rank 0, which writes one checkpoint (model,
optimizer, step, every rank's RNG states) atomically: to a temporary file, fsync, rename.
Then all exit 75. Started again with the same checkpoint directory, it resumes from exactly
that state, so the final parameters are bit-identical to an uninterrupted run's.

When the work is done, rank 0 writes the final parameters (--result, atomically) and then the
done file ($TIRESIAS_DONE_FILE), so serve marks the job finished even if a preemption signal
came after the last step, and every rank exits 0.

Runs one process per rank with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set, as
`tiresias submit --gpus 2 --tasks-per-gpu 1` and `torchrun` both do. Without RANK it runs
alone (world size 1).

Usage: train_ddp.py --steps N [--step-ms M] [--seed S] [--checkpoint-dir DIR]
                    [--checkpoint-every K] [--log-every L] [--result FILE]
Exit codes: 0 done; 75 stopped by a signal after writing the checkpoint; 1 a checkpoint that
does not match this run (another seed or world size); 2 bad command line.
"""
import argparse
import hashlib
import os
import random
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

STOPPED_EXIT = 75  # EX_TEMPFAIL: checkpointed, not done
SAMPLES, FEATURES, HIDDEN, CLASSES = 2048, 16, 64, 4

_stop_requested = False


def _on_stop(signum, frame):
    global _stop_requested
    _stop_requested = True


def say(rank, text):
    if rank == 0:
        print(text, flush=True)


def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path, write):
    """Calls write(file) on PATH.tmp, fsyncs it and renames it to PATH."""
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(os.path.dirname(os.path.abspath(path)))


def make_data(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(SAMPLES, FEATURES, generator=g)
    w = torch.randn(FEATURES, CLASSES, generator=g)
    y = (x @ w + 0.5 * torch.randn(SAMPLES, CLASSES, generator=g)).argmax(dim=1)
    return x, y


def rng_state(data_gen):
    return {"torch": torch.get_rng_state(), "data": data_gen.get_state(),
            "python": random.getstate()}


def set_rng_state(state, data_gen):
    torch.set_rng_state(state["torch"])
    data_gen.set_state(state["data"])
    random.setstate(state["python"])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, required=True, help="optimizer steps in total")
    p.add_argument("--step-ms", type=int, default=0, help="sleep after each step (ms)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--batch", type=int, default=32, help="samples per rank and step")
    p.add_argument("--checkpoint-dir", default=os.environ.get("TIRESIAS_CHECKPOINT_DIR", ""))
    p.add_argument("--checkpoint-every", type=int, default=0,
                   help="also checkpoint every K steps (survives SIGKILL)")
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--result", default="", help="write the final parameters here")
    args = p.parse_args()
    if args.steps < 0 or args.batch < 1:
        p.error("--steps must be >= 0 and --batch >= 1")

    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    # Fixed work per rank, one thread: the same order of floating-point operations every run.
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    signal.signal(signal.SIGTERM, _on_stop)
    signal.signal(signal.SIGINT, _on_stop)
    if "MASTER_ADDR" not in os.environ:  # alone
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="0")
    dist.init_process_group("gloo", rank=rank, world_size=world)
    print(f"rank {rank} of {world}: CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', '')}"
          f" LOCAL_RANK={os.environ.get('LOCAL_RANK', '')}"
          f" MASTER_PORT={os.environ.get('MASTER_PORT', '')}", flush=True)

    x, y = make_data(args.seed)
    torch.manual_seed(args.seed)  # the same initial weights on every rank
    model = DistributedDataParallel(nn.Sequential(
        nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Dropout(0.2), nn.Linear(HIDDEN, CLASSES)))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    # Each rank's own randomness: its dropout masks and the minibatches it draws.
    torch.manual_seed(args.seed * 1000 + rank + 1)
    random.seed(args.seed * 1000 + rank + 1)
    data_gen = torch.Generator().manual_seed(args.seed * 7919 + rank)

    ckpt_dir = args.checkpoint_dir
    ckpt = os.path.join(ckpt_dir, "ckpt.pt") if ckpt_dir else ""
    step = 0
    attempt = os.environ.get("TIRESIAS_ATTEMPT", "-")
    if ckpt and os.path.exists(ckpt):
        state = torch.load(ckpt)
        if state["seed"] != args.seed or state["world_size"] != world:
            print(f"train_ddp: {ckpt} is for seed {state['seed']} on {state['world_size']} "
                  f"ranks, not seed {args.seed} on {world}", file=sys.stderr)
            return 1
        model.module.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        set_rng_state(state["rng"][rank], data_gen)
        step = state["step"]
        say(rank, f"resumed from step {step}, attempt {attempt}")
    else:
        say(rank, f"starting from step 0, attempt {attempt}")

    def checkpoint(why):
        states = [None] * world
        dist.all_gather_object(states, rng_state(data_gen))
        if rank == 0:
            state = {"step": step, "seed": args.seed, "world_size": world,
                     "model": model.module.state_dict(), "optimizer": opt.state_dict(),
                     "rng": states}
            os.makedirs(ckpt_dir, exist_ok=True)
            write_atomically(ckpt, lambda f: torch.save(state, f))
            say(rank, f"checkpoint written at step {step} ({why})")
            marker = os.environ.get("TIRESIAS_CHECKPOINT_FILE", "")
            if marker:  # tells serve the work up to now is safe (checkpoint-aware preemption)
                with open(marker, "a"):
                    os.utime(marker)
        dist.barrier()  # nobody leaves before the checkpoint is whole

    loss = torch.tensor(0.0)
    while step < args.steps:
        # Every rank stops at the same step: the first at which any rank saw the signal.
        stop = torch.tensor([1 if _stop_requested else 0])
        dist.all_reduce(stop, op=dist.ReduceOp.MAX)
        if stop.item():
            if not ckpt:
                say(rank, f"stopped at step {step} without a checkpoint directory")
                dist.destroy_process_group()
                return STOPPED_EXIT
            checkpoint("stop signal")
            say(rank, f"stopped at step {step}; checkpoint written")
            # The checkpoint is whole (its barrier): leave at once. Tearing down gloo and the
            # interpreter once a peer has gone can hang past serve's grace period (a rank then
            # ends by SIGKILL instead of 75, seen once under load).
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(STOPPED_EXIT)
        idx = torch.randint(0, SAMPLES, (args.batch,), generator=data_gen)
        opt.zero_grad()
        loss = loss_fn(model(x[idx]), y[idx])
        loss.backward()  # gradients are averaged across ranks here
        opt.step()
        step += 1
        if args.log_every > 0 and step % args.log_every == 0:
            say(rank, f"step {step} loss={loss.item():.6f}")
        if ckpt and args.checkpoint_every > 0 and step % args.checkpoint_every == 0:
            checkpoint("periodic")
        if args.step_ms > 0:
            time.sleep(args.step_ms / 1000)

    if rank == 0:
        lines = [f"{name} {tuple(t.shape)} {t.detach().contiguous().numpy().tobytes().hex()}"
                 for name, t in model.module.state_dict().items()]
        text = "\n".join(lines) + "\n"
        if args.result:
            write_atomically(args.result, lambda f: f.write(text.encode()))
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        say(rank, f"final step {step} loss={loss.item():.9g} params_sha256={digest}")
        done = os.environ.get("TIRESIAS_DONE_FILE", "")
        if done:  # tells serve the work is complete, even if a stop signal comes now
            write_atomically(done, lambda f: f.write(b"done\n"))
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
