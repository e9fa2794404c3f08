"""Resource Miner (Wang et al., SoCC'23): shadow resources in shared-state scheduling.

Pure layer (no Mesa): :mod:`.theory` (E(S) = d_u A / 2l), :mod:`.measure` (the exact shadow
integral), :mod:`.shadow_view` (Algorithm 1), :mod:`.rm_filter` (§3.3), :mod:`.rm_scheduler`
(Algorithm 2), :mod:`.eviction` (§3.5), :mod:`.placement` (a probing random fit).

On the engine: :mod:`.config` (``RMinerConfig`` and its presets), :mod:`.model` (``RMAwareScheduler``,
``RMScheduler``, ``ShadowProbe``, ``RMinerModel``), :mod:`.simulation` (``run(config) -> RMinerResult``),
:mod:`.experiments` (Fig. 4, Figs. 10-16, the stale-view timeline), :mod:`.plots`, :mod:`.traces`
(seeded traces for the exercises).

Example
-------
>>> r = run(RMinerConfig.ci().replace(mode="smart", horizon=5.0))
>>> r.shadow_used_share > 0 and r.cpu_utilization > 0
True
"""

from .eviction import conflict_victims, evict_at_view_update
from .measure import ShadowMeter
from .rm_filter import FilterFactors, RMFilter
from .rm_scheduler import rm_choice, shadow_order
from .shadow_view import ShadowIndex, ShadowResourceManager
from .theory import expected_shadow, expected_survival_time, theory_shadow_ratio
from .config import RMinerConfig
from .simulation import RMinerResult, run

__all__ = [
    "FilterFactors", "RMFilter", "RMinerConfig", "RMinerResult", "run", "ShadowIndex", "ShadowMeter", "ShadowResourceManager",
    "conflict_victims", "evict_at_view_update", "expected_shadow", "expected_survival_time",
    "rm_choice", "shadow_order", "theory_shadow_ratio",
]
