// How hard a SQLite commit holds on to disk; its own module so the public types never import a driver.

/** `normal`: survives a process crash (WAL, synchronous=NORMAL). `full`: also survives power loss. */
export type Durability = "normal" | "full";
