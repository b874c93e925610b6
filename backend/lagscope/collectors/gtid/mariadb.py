"""MariaDB GTID positions (``domain-server-seq`` per domain, as ``@@gtid_binlog_pos``,
``Gtid_IO_Pos`` and ``@@gtid_slave_pos`` write them): one GTID, and a position of one per domain.
"""

from __future__ import annotations

from dataclasses import dataclass

from lagscope.collectors.gtid.intervals import _MAX_U32, _MAX_U64, _NUMBER_RE, _quote


@dataclass(frozen=True, slots=True)
class Gtid:
    """One MariaDB GTID ``domain-server-seq`` (u32-u32-u64)."""

    domain_id: int
    server_id: int
    seq_no: int

    def __post_init__(self) -> None:
        for name, value, top in (
            ("domain_id", self.domain_id, _MAX_U32),
            ("server_id", self.server_id, _MAX_U32),
            ("seq_no", self.seq_no, _MAX_U64),
        ):
            if not 0 <= value <= top:
                raise ValueError(f"MariaDB GTID {name} {_quote(str(value))} is outside 0..{top}")

    @classmethod
    def parse(cls, text: str) -> Gtid:
        parts = text.split("-")
        if len(parts) != 3:
            raise ValueError(f"bad MariaDB GTID {_quote(text.strip())}: want domain-server-seq")
        numbers: list[int] = []
        for name, part in zip(("domain_id", "server_id", "seq_no"), parts, strict=True):
            if _NUMBER_RE.fullmatch(part) is None:
                raise ValueError(
                    f"bad MariaDB GTID {_quote(text.strip())}: {name} {_quote(part.strip())} "
                    "is not a number"
                )
            numbers.append(int(part))
        return cls(*numbers)

    def __str__(self) -> str:
        return f"{self.domain_id}-{self.server_id}-{self.seq_no}"


@dataclass(frozen=True, slots=True)
class GtidPos:
    """A MariaDB GTID position: at most one GTID per domain, kept sorted by domain_id."""

    gtids: tuple[Gtid, ...] = ()

    def __post_init__(self) -> None:
        by_domain: dict[int, Gtid] = {}
        for gtid in self.gtids:
            seen = by_domain.setdefault(gtid.domain_id, gtid)
            # Two different GTIDs for one domain make the position ambiguous; a repeat of the
            # same one is harmless (e.g. a position pasted twice), so accept it.
            if seen != gtid:
                raise ValueError(
                    f"MariaDB GTID position has two GTIDs for domain {gtid.domain_id}: "
                    f"{_quote(str(seen))} and {_quote(str(gtid))}"
                )
        object.__setattr__(self, "gtids", tuple(by_domain[d] for d in sorted(by_domain)))

    @classmethod
    def parse(cls, text: str) -> GtidPos:
        """Parse ``''``, ``0-1-2042`` or ``0-1-2042,1-20-500``; empty items are skipped."""
        return cls(tuple(Gtid.parse(item) for item in text.split(",") if item.strip()))

    def get(self, domain_id: int) -> Gtid | None:
        return next((g for g in self.gtids if g.domain_id == domain_id), None)

    def seq(self, domain_id: int) -> int:
        """seq_no in ``domain_id``; 0 when absent, i.e. nothing from that domain yet."""
        gtid = self.get(domain_id)
        return 0 if gtid is None else gtid.seq_no

    def domains(self) -> tuple[int, ...]:
        return tuple(g.domain_id for g in self.gtids)

    def __bool__(self) -> bool:
        return bool(self.gtids)

    def __str__(self) -> str:
        return ",".join(map(str, self.gtids))
