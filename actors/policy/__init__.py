"""The RL policy actor: MaskablePPO that serves proposals and learns from the executed actions.

- learner.py      OnlineMaskablePPO: propose() / record() / begin_update, run_update, finish_update
                  on SB3's MaskableActorCriticPolicy, MaskableRolloutBuffer, train() and logger
- normalizer.py   VecNormalize-equivalent observation/reward normalisation (saved with the model)
- checkpoint.py   atomic checkpoint files (model + normaliser + counters), latest_checkpoint()
- training_log.py SB3 logger -> TensorBoard + ppo_update log events; the frozen-policy watch
- config.py       the [policy] section
- actor.py        the thin actor shell (ACTOR = PolicyActor)
- pass_through.py a stand-in for fusion + risk (proposal -> verdict), for tests and benchmarks
"""
