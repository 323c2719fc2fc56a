"""The text summaries of the page (health, account, learning, the chain behind a trade), read from a snapshot of the
state (state.py) or from its records: plain functions, no lock and no bokeh."""

from __future__ import annotations

from typing import Any

from actors.dashboard.model import Decision, action_name
from bus.messages import LoraRound


def columns_of(rows: list[dict[str, Any]], names: tuple[str, ...]) -> dict[str, list]:
    """Rows as the column dict a table's data source takes (empty columns when there are no rows)."""
    return {name: [row.get(name, "") for row in rows] for name in names}


def health_lines(snapshot: dict[str, Any]) -> list[str]:
    h = snapshot["health"]

    def us(value: float) -> str:
        return "-" if value != value else (f"{value / 1000:.1f} ms" if value >= 1000 else f"{value:.0f} µs")

    progress = f"{h['loop_step']:,}   env steps: {h['env_steps']:,}" + (f" / {h['total_steps']:,}" if h["total_steps"] else "")
    return [
        f"mode: {h['mode'] or '-'}", f"run: {h['run_dir']}", f"source: {h['source']}",
        f"loop step: {progress}", f"steps/s: {h['steps_per_sec']:,.0f}",
        f"decision latency p50 {us(h['latency_p50_us'])} / p99 {us(h['latency_p99_us'])}",
        f"feed lag: {'-' if h['feed_lag_secs'] != h['feed_lag_secs'] else format(h['feed_lag_secs'], '.1f') + ' s'}",
        f"messages: {h['messages']:,}   dropped frames: {h['dropped_frames']}",
    ]


def account_lines(snapshot: dict[str, Any]) -> list[str]:
    a, c = snapshot["account"], snapshot["counts"]
    if not a:
        live = snapshot["health"]["source"] == "live bus"
        return ["no account yet (waiting for env.obs)" if live else "no live account: the run is not on the bus (its report, if any, below)",
                f"trades {c['trades']}  vetoes {c['vetoes']}  errors {c['errors']}"]
    used = a["trailing_limit"] - a["drawdown_buffer"]
    position = "flat" if not a["position"] else f"{'long' if a['position'] > 0 else 'short'} {a['contracts']:.0f} @ {a['entry_price']:.2f}"
    if a["position"] and a.get("stop_price"):
        position += f"  stop {a['stop_price']:.2f}  target {a['target_price']:.2f}"
    rules, accounts = snapshot.get("rules", {}), snapshot.get("accounts", [])
    limit = rules.get("daily_loss_limit", 0.0)
    daily = f"today's P&L: ${a['daily_pnl']:,.2f}" + (f" (daily loss limit -${limit:,.0f}, {_left(a['daily_pnl'] + limit)} left)" if limit
                                                       else " (no daily loss limit)")
    minutes = a["minutes_to_close"]
    flat = "flat rule: none" if minutes != minutes or minutes > 24 * 60 else f"flat rule in {int(minutes) // 60} h {int(minutes) % 60:02d} min"
    lines = [
        f"{a['symbol']} {a['time_et']} ET   position: {position}",
        f"equity: ${a['equity']:,.2f}   unrealised: ${a['unrealized_pnl']:,.2f}",
        f"drawdown: ${used:,.0f} of ${a['trailing_limit']:,.0f} (buffer ${a['drawdown_buffer']:,.0f})",
        f"{daily}   {flat}",
    ]
    if accounts:
        current, target = accounts[0], rules.get("profit_target", 0.0)
        progress = f"net ${current['net']:,.2f}" + (f" of the ${target:,.0f} target" if target else "")
        counts = snapshot.get("account_counts", {})
        lines.append(f"evaluation account {current['account']} ({current['outcome']}): {progress}   walk: passed {counts.get('passed', 0)} "
                     f"failed {counts.get('failed', 0)} ended {counts.get('ended', 0)} open {snapshot.get('open_accounts', 0)}")
    lines.append(f"decisions {c['decisions']:,}  trades {c['trades']}  vetoes {c['vetoes']}  thoughts {c['thoughts']}  errors {c['errors']}")
    return lines


def _left(dollars: float) -> str:
    return f"${max(dollars, 0.0):,.0f}"


def learning_lines(snapshot: dict[str, Any]) -> list[str]:
    """Fusion accuracy against hindsight labels and fusion's own figures (its Stats gauges)."""
    s, g = snapshot["scores"], snapshot["fusion_gauges"]

    def ratio(hits: int, n: int) -> str:
        return f"{hits / n:.2f} of {n}" if n else "n/a"

    if s["scored"]:
        lines = [f"fusion chose the right source {ratio(s['chose_right'], s['contested'])}   fused = label {ratio(s['fused_hits'], s['scored'])}",
                 f"RL = label {ratio(s['rl_hits'], s['scored'])}   LLM = label {ratio(s['llm_hits'], s['scored'])}"]
    else:
        lines = ["fusion accuracy: no hindsight label yet (flat decisions with a thought; env.publish_hindsight or LoRA's labels)"]
    if g:
        def gauge(key: str) -> str:
            value = g.get(key, float("nan"))
            return "-" if value != value else f"{value:.2f}"

        lines.append(f"fusion: query rate {gauge('query_rate')}  agreement {gauge('agreement_rate')}  trust RL {gauge('mean_rl_trust')} / "
                     f"LLM {gauge('mean_llm_trust')}" + (f"  network accuracy {gauge('network_accuracy')} "
                                                        f"({g.get('network_updates', 0):.0f} updates)" if "network_updates" in g else ""))
    return lines


def decision_text(d: Decision) -> str:
    row = d.row()
    return (f"step {d.step}: RL {row['rl']} ({row['probs']}); LLM {row['llm']} stale {row['stale']} {row['adapter']} "
            f"'{row['reason']}'; fusion {row['fusion']} trust {row['trust']} -> {action_name(d.fused_action)}; "
            f"risk {row['risk']}{' halt ' + d.halt if d.halt else ''} -> {row['final']}")


LOG_SKIP = {"timestamp", "level", "actor", "event", "run", "logger"}
"""A log record's keys that its event row shows elsewhere (time, kind, actor)."""


def fields_text(record: dict[str, Any], limit: int = 160) -> str:
    text = " ".join(f"{k}={v}" for k, v in record.items() if k not in LOG_SKIP)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def lora_row(msg: LoraRound, clock: str) -> dict[str, Any]:
    """A row of the LoRA rounds table: match rate before -> after, published or refused, a collapse alarm."""
    def rate(value: float) -> str:
        return "-" if value != value else f"{value:.2f}"

    return {"version": msg.version, "time": clock, "experiences": str(msg.experiences),
            "match": f"{rate(msg.match_rate_before)} -> {rate(msg.match_rate_after)}", "published": "published" if msg.published else "refused",
            "alarm": "collapse" if msg.collapsed else "-"}
