"""The serving copy of the policy as plain numpy arithmetic.

A 261 -> 64 -> 64 -> 6 MLP is a few microseconds of arithmetic, but torch spends about
80 us per call on dispatch in a hot loop and several times that in an actor process whose
caches are cold after every bus hop. The decision loop runs this numpy copy of SB3's
MaskableActorCriticPolicy (FlattenExtractor + MlpExtractor + action/value heads: the same
arithmetic), refreshed from the torch policy after every PPO update. Anything else falls
back to torch.
"""

from __future__ import annotations

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import FlattenExtractor

_ACTIVATIONS = {
    torch.nn.Tanh: np.tanh,
    torch.nn.ReLU: lambda x: np.maximum(x, 0.0),
    torch.nn.Identity: lambda x: x,
}

Layer = tuple[np.ndarray, np.ndarray]  # (weight.T [in, out], bias [out]) or an activation


def _sequential(module: torch.nn.Module) -> list:
    steps: list = []
    for layer in module:
        if isinstance(layer, torch.nn.Linear):
            steps.append((layer.weight.detach().numpy().T.astype(np.float32).copy(), layer.bias.detach().numpy().astype(np.float32).copy()))
        elif type(layer) in _ACTIVATIONS:
            steps.append(_ACTIVATIONS[type(layer)])
        else:
            raise TypeError(f"no numpy form for {type(layer).__name__}")
    return steps


def _run(steps: list, x: np.ndarray) -> np.ndarray:
    for step in steps:
        if isinstance(step, tuple):
            weight, bias = step
            x = x @ weight + bias
        else:
            x = step(x)
    return x


def numpy_form(policy: MaskableActorCriticPolicy) -> NumpyPolicy | None:
    """The policy's numpy copy, or None where a layer has no numpy form (torch serves then)."""
    try:
        return NumpyPolicy(policy)
    except TypeError:
        return None


class NumpyPolicy:
    """logits and values of an SB3 MLP policy, in numpy (float32)."""

    def __init__(self, policy: MaskableActorCriticPolicy) -> None:
        self.load(policy)

    def load(self, policy: MaskableActorCriticPolicy) -> None:
        extractors = [policy.features_extractor] if policy.share_features_extractor else [policy.pi_features_extractor, policy.vf_features_extractor]
        if not all(isinstance(e, FlattenExtractor) for e in extractors):
            raise TypeError("only FlattenExtractor features have a numpy form")
        with torch.no_grad():
            self.pi = _sequential(policy.mlp_extractor.policy_net) + _sequential(torch.nn.Sequential(policy.action_net))
            self.vf = _sequential(policy.mlp_extractor.value_net) + _sequential(torch.nn.Sequential(policy.value_net))

    def logits_and_values(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = obs.reshape(len(obs), -1).astype(np.float32, copy=False)
        return _run(self.pi, x), _run(self.vf, x)[:, 0]


def sample(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row by inverse CDF; an action of probability 0 (masked) is never drawn."""
    cdf = np.cumsum(probs, axis=1, dtype=np.float64)
    cdf /= cdf[:, -1:]
    u = rng.random((len(probs), 1))
    return (cdf > u).argmax(axis=1).astype(np.int64)
