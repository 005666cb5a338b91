"""Population-based training of the mass-spring robot's learning rate with Ray Tune, each trial
a vkdiff runtime that lives in a reused Ray actor (reuse_actors=True: ti.init and the kernels'
compilation happen once per actor, not once per trial).

The robot is tools/programs/mass_spring_robot.py (DiffTaichi-style, written for `import taichi as
ti`; vkdiff runs it through the alias). PBT copies the weights of good trials into bad ones
(checkpoints: the four weight arrays) and perturbs their learning rates.

    .venv/bin/python examples/tune_robot_pbt.py --trials 4 --iters 12
    # on a cluster (ray start --head / ray start --address=HEAD:6379 on the others):
    .venv/bin/python examples/tune_robot_pbt.py --address auto
"""
import argparse
import importlib
import os
import sys
from pathlib import Path

import numpy as np

PROGRAMS = str(Path(__file__).resolve().parents[1] / 'tools' / 'programs')
WEIGHTS = ('weights1', 'bias1', 'weights2', 'bias2')


def _robot():
    """The robot module in this actor's runtime (imported once per process, after ti.init)."""
    import vkdiff  # noqa: PLC0415
    sys.modules.setdefault('taichi', vkdiff)
    if PROGRAMS not in sys.path:
        sys.path.insert(0, PROGRAMS)
    if not getattr(_robot, 'initialised', False):
        vkdiff.init()
        _robot.initialised = True
    return importlib.import_module('mass_spring_robot')


def make_trainable():
    from ray import tune  # noqa: PLC0415

    class RobotTrainable(tune.Trainable):
        def setup(self, config):
            self.robot = _robot()
            self.initial = {w: getattr(self.robot, w).to_numpy() for w in WEIGHTS}
            self.reset_config(config)

        def reset_config(self, new_config):
            """A reused actor starts a new trial: fresh weights (a checkpoint may follow)."""
            self.robot.learning_rate = float(new_config['lr'])
            for w, a in self.initial.items():
                getattr(self.robot, w).from_numpy(a)
            return True

        def step(self):
            return {'loss': float(self.robot.iteration()), 'lr': self.robot.learning_rate,
                    'pid': os.getpid()}

        def save_checkpoint(self, checkpoint_dir):
            np.savez(os.path.join(checkpoint_dir, 'weights.npz'),
                     **{w: getattr(self.robot, w).to_numpy() for w in WEIGHTS})
            return checkpoint_dir

        def load_checkpoint(self, checkpoint_dir):
            data = np.load(os.path.join(checkpoint_dir, 'weights.npz'))
            for w in WEIGHTS:
                getattr(self.robot, w).from_numpy(data[w])

    return RobotTrainable


def run(trials=4, iters=12, address=None, storage=None):
    import ray  # noqa: PLC0415
    from ray import tune  # noqa: PLC0415
    from ray.tune.schedulers import PopulationBasedTraining  # noqa: PLC0415
    if not ray.is_initialized():
        if address:
            ray.init(address=address)
        else:
            os.environ.setdefault('RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER', '0')  # loopback only
            ray.init(include_dashboard=False)
    pbt = PopulationBasedTraining(time_attr='training_iteration', metric='loss', mode='min',
                                  perturbation_interval=3,
                                  hyperparam_mutations={'lr': tune.loguniform(1.0, 100.0)})
    tuner = tune.Tuner(
        tune.with_resources(make_trainable(), {'cpu': 1}),
        param_space={'lr': tune.grid_search([2.0 * 3 ** k for k in range(trials)])},
        tune_config=tune.TuneConfig(scheduler=pbt, reuse_actors=True),
        run_config=tune.RunConfig(stop={'training_iteration': iters}, verbose=0,
                                  storage_path=storage,
                                  checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=3)))
    results = tuner.fit()
    best = results.get_best_result('loss', 'min')
    return results, best


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--trials', type=int, default=4)
    p.add_argument('--iters', type=int, default=12)
    p.add_argument('--address', default=None, help="a Ray cluster to join, e.g. 'auto'")
    args = p.parse_args(argv)
    results, best = run(args.trials, args.iters, args.address)
    for r in results:
        print(f"trial lr {r.config['lr']:8.3f}: final loss {r.metrics['loss']:.5f}")
    print(f"best: loss {best.metrics['loss']:.5f} with lr {best.config['lr']:.3f}")


if __name__ == '__main__':
    main()
