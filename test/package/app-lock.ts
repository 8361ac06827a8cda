// A package-lock.json for a temporary app that depends on the packed tarball, built from the repo's own
// lockfile, so `npm ci --offline` installs exactly the versions `npm ci` put in the local npm cache: no
// registry lookups, the same tree a user gets from the tarball today.

/** One entry of a lockfile (v3) `packages` map. */
interface LockEntry {
  version?: string;
  dev?: boolean;
  devOptional?: boolean;
  [field: string]: unknown;
}

/** The parts of the repo's lockfile this reads. */
export interface RepoLock {
  lockfileVersion: number;
  packages: Record<string, LockEntry>;
}

/** The package.json fields of the packed package that its lock entry repeats. */
export interface PackedManifest {
  name: string;
  version: string;
  license?: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  bin?: Record<string, string>;
  engines?: Record<string, string>;
}

/** What the app depends on besides the tarball; each name must be in the repo's lockfile. */
export interface AppDeps {
  dependencies: string[];
  devDependencies: string[];
}

/**
 * The app's package.json and package-lock.json: the tarball, every entry of the repo's production tree
 * (the package's own dependencies, which is what an app installs with it), and the named extra packages
 * at the versions the repo pins, with their own dependencies when those are dev-only in the repo.
 */
export function appManifestAndLock(
  repo: RepoLock,
  packed: PackedManifest,
  tarball: string,
  deps: AppDeps,
): { manifest: Record<string, unknown>; lock: Record<string, unknown> } {
  if (repo.lockfileVersion !== 3)
    throw new Error(`The repo's package-lock.json is version ${repo.lockfileVersion}; this expects 3.`);
  const versionOf = (name: string): string => {
    const v = repo.packages[`node_modules/${name}`]?.version;
    if (!v) throw new Error(`${name} is not in the repo's package-lock.json; add it as a devDependency.`);
    return v;
  };
  const pin = (names: string[]) => Object.fromEntries(names.map((n) => [n, versionOf(n)]));
  const dependencies = { [packed.name]: `file:${tarball}`, ...pin(deps.dependencies) };
  const devDependencies = pin(deps.devDependencies);
  const manifest = {
    name: "waymark-install-test-app",
    private: true,
    type: "module",
    dependencies,
    devDependencies,
  };

  const packages: Record<string, unknown> = { "": { name: manifest.name, dependencies, devDependencies } };
  for (const [where, entry] of Object.entries(repo.packages)) {
    if (where !== "" && !entry.dev && !entry.devOptional) packages[where] = entry;
  }
  // The extras and what they need, found by walking their dependencies through the repo's top level.
  const queue = [...deps.devDependencies, ...deps.dependencies];
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    const where = `node_modules/${name}`;
    if (where in packages) continue; // in the production tree already, or visited
    const entry = repo.packages[where];
    if (!entry) throw new Error(`${name} is not at the top of the repo's package-lock.json.`);
    packages[where] = { ...entry, dev: true };
    queue.push(...Object.keys((entry.dependencies as Record<string, string> | undefined) ?? {}));
  }
  const { name, version, license, dependencies: own, peerDependencies, bin, engines } = packed;
  packages[`node_modules/${name}`] = {
    version,
    resolved: `file:${tarball}`,
    license,
    dependencies: own,
    peerDependencies,
    bin,
    engines,
  };
  return { manifest, lock: { name: manifest.name, lockfileVersion: 3, requires: true, packages } };
}
