import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ENTRY_POINT, PER_INSTANCE_VARIABLES, topologyEnvironment } from './topology/parts';
import { nginxConfig } from '../bench/nginx';

/**
 * The container files (Dockerfile, docker-compose.yml, deploy/nginx.conf) describe the topology
 * the topology test runs on Debian's packages (no container engine here to build them): the same
 * entry point, the same roles, the same variables, the same balancer settings.
 */
const ROOT = join(__dirname, '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

interface ComposeService {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
}

describe('deployment files agree with the topology test', () => {
  const compose = parse(read('docker-compose.yml'), { merge: true }) as {
    services: Record<string, ComposeService>;
  };
  const services = compose.services;
  const instances = Object.entries(services).filter(([, s]) => s.build === '.');
  const tested = topologyEnvironment({
    databaseUrl: 'postgres://x@h/db',
    rpcUrl: 'http://rpc',
    serviceKey: '[]',
    publicBaseUrl: 'http://lb',
    devKey: 'k',
  });

  it('runs two api instances and one worker of the image, with the entry point the test starts', () => {
    expect(instances.map(([name, s]) => [name, s.environment?.ROLE])).toEqual([
      ['api1', 'api'],
      ['api2', 'api'],
      ['worker', 'worker'],
    ]);
    for (const [, service] of instances) expect(service.command).toEqual(ENTRY_POINT);
    expect(read('Dockerfile')).toContain(`CMD ${JSON.stringify(ENTRY_POINT).replace(/,/g, ', ')}`);
  });

  it('gives every instance the variables the test gives (production values), and no others', () => {
    const testedNames = Object.keys(tested.production).sort();
    for (const [name, service] of instances) {
      const names = Object.keys(service.environment ?? {}).filter(
        (v) => !PER_INSTANCE_VARIABLES.includes(v),
      );
      expect([name, names.sort()]).toEqual([name, testedNames]);
      // What only the test sets never reaches production (a dev key, test intervals).
      for (const v of Object.keys(tested.test)) expect(service.environment).not.toHaveProperty(v);
    }
  });

  it('builds a non-root image of production dependencies only, without localnet', () => {
    const dockerfile = read('Dockerfile');
    const production = dockerfile.slice(dockerfile.lastIndexOf('FROM '));
    expect(production).toContain('npm ci --omit=dev --workspaces=false');
    expect(production).toMatch(/^USER node$/m);
    expect(production).not.toMatch(/localnet\/dist|litesvm/);
  });

  it('balances over the api instances only, with the proxy settings the test runs', () => {
    const nginx = read('deploy/nginx.conf');
    const upstreams = [...nginx.matchAll(/^\s*server (\w+):3000/gm)].map((m) => m[1]);
    expect(upstreams).toEqual(
      instances.filter(([, s]) => s.environment?.ROLE === 'api').map(([n]) => n),
    );
    expect(services.nginx.volumes).toContain('./deploy/nginx.conf:/etc/nginx/nginx.conf:ro');
    // The test's config is the shipped one with its servers, port and paths put in.
    const run = nginxConfig(8080, [4001, 4002], '/tmp/run');
    expect(run).toContain('server 127.0.0.1:4001 max_fails=1 fail_timeout=2s;');
    expect(run).toContain('server 127.0.0.1:4002 max_fails=1 fail_timeout=2s;');
    expect(run).not.toMatch(/server api\d/);
    const settings = (conf: string) =>
      conf.split('\n').filter((l) => /^\s*proxy_(?!temp_path)/.test(l));
    expect(settings(run)).toEqual(settings(nginx));
    // The service trusts one hop (nginx), which writes the client's own address.
    expect(tested.production.TRUST_PROXY).toBe('1');
    expect(nginx).toContain('proxy_set_header X-Forwarded-For $remote_addr;');
  });
});
