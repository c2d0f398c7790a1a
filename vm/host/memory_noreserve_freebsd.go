package host

// mapNoReserve is 0 on FreeBSD, which has no MAP_NORESERVE: it does not
// reserve swap for an anonymous mapping in the first place.
const mapNoReserve = 0
