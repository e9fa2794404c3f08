"""The paper's model of shadow resources (§2.3, equations (4)-(6)).

A resource released by a finishing task stays invisible to every local state view (LSV) until the
next view update. With a steady release rate, the survival time ``T_s`` of such a *shadow*
fragment is uniform on ``[0, d_u]`` (mean ``d_u / 2``); tasks finish at rate ``A / l`` resource
units per second (Little's law), so the instantaneous shadow amount has the expectation

    E(S) = d_u * A**3 / (2 * l * (A - tau)**2)      (5)   ~=   d_u * A / (2 * l)      (6)

where ``A`` is the allocated amount, ``l`` the mean task execution time and ``tau`` the mean task
demand (negligible against ``A``). The shadow *ratio* ``E(S) / A`` is then ``d_u / (2 l)``: 3% to
12.5% for ``d_u`` in 0.3-1.0 s and ``l`` in 4-5 s, as the paper reports.

(The paper's PDF-to-text rendering garbles the symbols of (5); we read it as above, the only
reading that is dimensionally a resource amount and reduces to (6) when ``tau << A``.)

Example
-------
>>> theory_shadow_ratio(update_delay=0.5, mean_task_duration=5.0)
0.05
>>> expected_shadow(update_delay=0.5, allocated=1000.0, mean_task_duration=5.0)
50.0
"""

from __future__ import annotations

from ..validate import number


def theory_shadow_ratio(update_delay: float, mean_task_duration: float) -> float:
    """Expected shadow / allocated resources, ``d_u / (2 l)`` (equation (6) divided by A).

    >>> round(theory_shadow_ratio(0.3, 5.0), 3), round(theory_shadow_ratio(1.0, 4.0), 3)
    (0.03, 0.125)
    """
    d_u = number(update_delay, "update_delay", lo=0)
    l = number(mean_task_duration, "mean_task_duration", lo=0, lo_open=True)
    return d_u / (2.0 * l)


def expected_shadow(
    update_delay: float, allocated: float, mean_task_duration: float, mean_demand: float = 0.0
) -> float:
    """Expected instantaneous shadow amount: equation (5), or (6) when ``mean_demand`` is 0.

    >>> round(expected_shadow(0.5, 100.0, 5.0, mean_demand=1.0), 4)  # (5): a little above (6)
    5.1015
    """
    d_u = number(update_delay, "update_delay", lo=0)
    a = number(allocated, "allocated", lo=0)
    l = number(mean_task_duration, "mean_task_duration", lo=0, lo_open=True)
    tau = number(mean_demand, "mean_demand", lo=0)
    if a and tau >= a:
        raise ValueError(
            f"mean_demand={mean_demand!r} is not allowed: equation (5) needs mean_demand < allocated={allocated!r}"
        )
    return shadow_of(d_u, a, l, tau)


def shadow_of(d_u: float, a: float, l: float, tau: float = 0.0) -> float:
    """:func:`expected_shadow` of arguments already checked (the RM filter asks at every job's arrival, with
    the config's values and the CSV's allocation: checking them each time was a fortieth of a paper run)."""
    if a == 0:
        return 0.0
    return d_u * a**3 / (2.0 * l * (a - tau) ** 2)


def expected_survival_time(update_delay: float) -> float:
    """Mean survival time of a shadow fragment, ``E(T_s) = d_u / 2`` (``T_s ~ U(0, d_u)``)."""
    return number(update_delay, "update_delay", lo=0) / 2.0
