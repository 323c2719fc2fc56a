from runtime.rate import StepRate


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_step_every_few_seconds_reads_as_a_steady_fraction_not_as_zero_and_one_in_turn():
    clock = Clock()
    meter = StepRate(0, window_secs=10.0, clock=clock)
    rates = []
    for second in range(1, 31):  # a progress report a second, a step every 3 s
        clock.now = float(second)
        rates.append(meter.rate(second // 3))

    assert all(0.25 <= rate <= 0.45 for rate in rates[10:])


def test_the_rate_follows_a_change_of_pace_within_its_window():
    clock = Clock()
    meter = StepRate(0, window_secs=5.0, clock=clock)
    steps = 0
    for second in range(1, 21):
        clock.now = float(second)
        steps += 100 if second <= 10 else 10
        rate = meter.rate(steps)

    assert 9.0 <= rate <= 11.0
