"""The trainer's forward pass in llama.cpp's arithmetic: 8-bit activation blocks before quantised weights, half-precision
keys and values, gradients straight through."""

import numpy as np
import pytest
import torch

from actors.common.llm.model import default_model_path
from actors.lora.config import LoraConfig
from actors.lora.llama_arithmetic import activation_rounding, round_to_int8_blocks, straight_through


def test_a_block_of_int8_values_at_full_scale_is_kept_as_it_is():
    block = torch.arange(-127, 129, 8, dtype=torch.float32)[:32].clone()
    block[0] = -127.0  # max |x| = 127: the scale is exactly 1
    np.testing.assert_array_equal(round_to_int8_blocks(block.reshape(1, 32), 32, True).numpy()[0], block.numpy())


def test_each_value_moves_by_at_most_half_a_step_of_its_own_blocks_scale():
    x = torch.randn(3, 64, generator=torch.Generator().manual_seed(0))
    x[0, 40] = 50.0  # an outlier coarsens its own block only
    rounded = round_to_int8_blocks(x, 32, False)
    for row in range(3):
        for start in (0, 32):
            block, out = x[row, start:start + 32], rounded[row, start:start + 32]
            step = float(block.abs().max()) / 127
            assert float((out - block).abs().max()) <= step / 2 + 1e-6
    assert float((rounded[0, :32] - x[0, :32]).abs().max()) < 0.02  # the first block did not see the outlier
    assert float((rounded[0, 32:] - x[0, 32:]).abs().max()) > 0.05


def test_the_weight_type_decides_the_rounding():
    x = torch.randn(2, 512, generator=torch.Generator().manual_seed(1))
    assert activation_rounding("F32", 512) is None
    assert activation_rounding("Q4_K", 576) is None  # not whole blocks of 256: llama.cpp would not use Q8_K rows here
    np.testing.assert_array_equal(activation_rounding("Q4_1", 512)(x).numpy(), round_to_int8_blocks(x, 32, True).numpy())
    np.testing.assert_array_equal(activation_rounding("Q6_K", 512)(x).numpy(), round_to_int8_blocks(x, 256, False).numpy())
    np.testing.assert_array_equal(activation_rounding("F16", 512)(x).numpy(), x.half().float().numpy())


def test_the_rounding_passes_gradients_straight_through():
    x = torch.randn(4, 64, requires_grad=True)
    (straight_through(activation_rounding("Q8_0", 64))(x) * 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((4, 64), 3.0, dtype=np.float32))


@pytest.mark.slow
def test_the_trainer_mirrors_every_quantised_layer_of_smollm2_and_still_trains_its_lora_weights():
    from actors.lora.trainer import LoraTrainer
    from tests.actors.lora.planted import trend_experiences

    plain = LoraTrainer(LoraConfig(mirror_llama_arithmetic=False, torch_threads=1), default_model_path())
    mirrored = LoraTrainer(LoraConfig(torch_threads=1), default_model_path())
    assert (plain.mirrored_layers, mirrored.mirrored_layers) == (0, 30 * 7 + 1)  # q k v o gate up down per block, the output

    batch = trend_experiences(2, seed=3)
    with torch.no_grad():
        plain_loss, mirrored_loss = float(plain._loss(batch)[0]), float(mirrored._loss(batch)[0])
    assert plain_loss != mirrored_loss and abs(plain_loss - mirrored_loss) < 0.05 * plain_loss  # rounded, not another model

    loss, _ = mirrored._loss(batch)
    loss.backward()
    grads = [p.grad for p in mirrored._params]
    assert all(g is not None for g in grads) and sum(float(g.abs().sum()) for g in grads) > 0
