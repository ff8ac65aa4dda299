import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Debian's nginx as the load balancer of the production topology, configured from
 * `deploy/nginx.conf` (the compose file's): the same proxy settings, with the upstream servers,
 * the listen address and the paths of a run put in. Used by the topology test and
 * `npm run bench:topology`.
 */

/** The project's root, from `bench/` (sources under ts-jest) or `dist/bench/` (built). */
function projectRoot(): string {
  for (const up of ['..', join('..', '..')]) {
    const root = join(__dirname, up);
    if (existsSync(join(root, 'deploy', 'nginx.conf'))) return root;
  }
  throw new Error('deploy/nginx.conf not found');
}

export function nginxBinary(): string {
  for (const path of ['/usr/sbin/nginx', '/usr/bin/nginx']) if (existsSync(path)) return path;
  throw new Error("Debian's nginx is not installed (apt-get install nginx; .ci/run does it)");
}

/**
 * `deploy/nginx.conf` for a run: its `upstream api` servers replaced by the instances' ports,
 * its `listen` by a loopback port, and the paths nginx writes (pid, temp files) put in `dir`.
 */
export function nginxConfig(port: number, upstreams: readonly number[], dir: string): string {
  const shipped = readFileSync(join(projectRoot(), 'deploy', 'nginx.conf'), 'utf8');
  const servers = upstreams.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=2s;`);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((kind) => `  ${kind}_temp_path ${join(dir, `${kind}-temp`)};`)
    .join('\n');
  return shipped
    .replace(/^\s*server api\d+:\d+[^;]*;\n/gm, '')
    .replace(/upstream api \{\n/, `upstream api {\n${servers.join('\n')}\n`)
    .replace(/listen \d+;/, `listen 127.0.0.1:${port};`)
    .replace(/^pid [^;]*;/m, `pid ${join(dir, 'nginx.pid')};`)
    .replace(/^error_log [^;]*;/m, `error_log ${join(dir, 'nginx-error.log')} warn;`)
    .replace(/http \{\n/, `http {\n${temp}\n`);
}

/** nginx in the foreground on `port`, balancing over `upstreams`; its files in `dir`. */
export async function startNginx(
  dir: string,
  port: number,
  upstreams: readonly number[],
): Promise<{ url: string; child: ChildProcess; stop: () => void }> {
  // Workers run as nobody when the master is root: they must reach the run's temp paths.
  chmodSync(dir, 0o755);
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConfig(port, upstreams, dir));
  const args = ['-c', conf, '-p', dir, '-e', join(dir, 'nginx-error.log')];
  execFileSync(nginxBinary(), ['-t', ...args], { stdio: 'pipe' });
  const child = spawn(nginxBinary(), [...args, '-g', 'daemon off;'], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${readLog(dir)}`);
    try {
      await fetch(`${url}/health/live`);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`nginx not listening: ${readLog(dir)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    url,
    child,
    stop: () => {
      if (child.exitCode === null) child.kill('SIGQUIT');
    },
  };
}

function readLog(dir: string): string {
  const log = join(dir, 'nginx-error.log');
  return existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : '';
}
