"""Numbers: the number contexts, the one place numbers come from (:mod:`.context`: gmp,
mp and fp; :mod:`.arb`: Arb balls and Krawczyk's test), the one dense linear solve and
Cholesky test (:mod:`.linalg`), the one Newton method (:mod:`.newton`), the Weierstrass
function (:mod:`.elliptic`) and the Arb helpers of the exact references (:mod:`.arbref`).

May import: :mod:`mpvi.ground`.
"""
