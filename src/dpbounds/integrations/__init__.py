"""dpbounds inside the DP-SGD frameworks: Opacus (PyTorch) and dp_accounting (JAX Privacy, TF Privacy).

Each submodule imports its framework when it is imported itself; ``import dpbounds`` and
``import dpbounds.integrations`` import none of them.

``dpbounds.integrations.opacus`` (``pip install "dpbounds[opacus]"``, after installing torch)
    Opacus accountants backed by dpbounds, registered under ``"dpbounds_random_allocation"``,
    ``"dpbounds_poisson"`` and ``"dpbounds_rdp"`` when the module is imported, and
    :func:`~dpbounds.integrations.opacus.make_private_random_allocation`, which builds the
    private model, optimizer and random-allocation data loader in one call, calibrated to a
    target (epsilon, delta).  See docs/opacus.md.
``dpbounds.integrations.pytorch`` (torch only)
    :class:`~dpbounds.integrations.pytorch.RandomAllocationBatchSampler`, the batch sampler of
    random allocation for ``torch.utils.data.DataLoader(batch_sampler=...)``.
``dpbounds.integrations.dp_accounting`` (``pip install "dpbounds[dp-accounting]"``)
    :class:`~dpbounds.integrations.dp_accounting.DPBoundsAccountant`, a
    ``dp_accounting.PrivacyAccountant`` backed by dpbounds, and
    :class:`~dpbounds.integrations.dp_accounting.RandomAllocationDpEvent`.  See
    docs/dp_accounting.md.

Reading order: ``_common`` (the history checks and Gaussian brackets the integrations share,
without any framework), then ``pytorch``, ``opacus`` and ``dp_accounting``.
"""
from __future__ import annotations

__all__: list[str] = []
