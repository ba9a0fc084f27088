"""Pictures of memory plans (PNG, with matplotlib: tflm-host's [plot] extra)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from .arena import Layout


def live_bytes(layout: Layout) -> list[int]:
    """Bytes planned in the head at each allocation scope."""
    return [sum(b.size for b in layout.buffers if b.first <= s <= b.last) for s in range(layout.scopes)]


MISSING = "--png draws with matplotlib, which is not installed: pip install matplotlib (tflm-host's [plot] extra)"


def require_matplotlib() -> None:
    """One line before any work when matplotlib is missing (an optional dependency)."""
    if importlib.util.find_spec("matplotlib") is None:
        raise RuntimeError(MISSING)


def plot_plans(plans: list[tuple[str, Layout]], path: Path, title: str) -> None:
    """One panel per plan: each buffer a box over the operators it lives
    through (x) and the arena offsets it holds (y); the head size and the
    busiest operator are marked."""
    require_matplotlib()
    import matplotlib  # optional and slow to import: only when a picture is asked for

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    fig, axes = plt.subplots(1, len(plans), figsize=(7 * len(plans), 6), squeeze=False)
    top = max(max(layout.head, 1) for _, layout in plans)
    cmap = plt.get_cmap("tab20")
    for ax, (name, layout) in zip(axes[0], plans):
        live = live_bytes(layout)
        peak_scope = max(range(len(live)), key=live.__getitem__) if live else 0
        ax.axvspan(peak_scope - 0.5, peak_scope + 0.5, color="#ffe9a8", zorder=0)
        for b in layout.buffers:
            color = "#bbbbbb" if b.tensor < 0 else cmap(b.index % 20)
            ax.add_patch(Rectangle((b.first - 0.45, b.offset), b.last - b.first + 0.9, b.size,
                                   facecolor=color, edgecolor="black", linewidth=0.4, zorder=2))
            if b.size >= top / 40:
                label = "#" if b.tensor < 0 else str(b.tensor)
                ax.text(b.first + (b.last - b.first) / 2, b.offset + b.size / 2, label,
                        ha="center", va="center", fontsize=7, zorder=3)
        ax.axhline(layout.head, color="crimson", linestyle="--", linewidth=1, zorder=4)
        ax.text(-0.4, layout.head, f" head {layout.head} B", color="crimson", va="bottom", fontsize=8)
        ax.set_xlim(-0.6, max(layout.scopes - 0.4, 0.6))
        ax.set_ylim(0, top * 1.08)
        ax.set_xlabel("allocation scope (operator n-1; 0: inputs)")
        ax.set_ylabel("arena offset (bytes)")
        ax.set_title(f"{name}: head {layout.head} B, peak {live[peak_scope] if live else 0} B live "
                     f"at scope {peak_scope}", fontsize=9)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
