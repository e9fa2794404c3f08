"""Morpheus (Jyothi et al., OSDI'16): SLO inference, the LP job resource model, LowCost packing and reprovisioning."""
