/** Neutron's bulk create: one POST with the plural key creates every item, or none of them. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, create, expectFault, startCloud, unique, type Cloud } from './setup.js';

let cloud: Cloud;

beforeAll(async () => {
  cloud = await startCloud();
});

afterAll(async () => {
  await cloud?.sim.close();
});

describe('bulk create', () => {
  it('creates several security group rules in one request and answers them in order', async () => {
    const group = await create(cloud.demo, `${cloud.v2}/security-groups`, 'security_group', { name: unique('sg') });
    const res = await call(cloud.demo, 'POST', `${cloud.v2}/security-group-rules`, {
      security_group_rules: [
        { security_group_id: group.id, direction: 'ingress', protocol: 'tcp', port_range_min: 22, port_range_max: 22 },
        { security_group_id: group.id, direction: 'ingress', protocol: 'tcp', port_range_min: 6443, port_range_max: 6443, remote_group_id: group.id },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.security_group_rules.map((rule: { port_range_min: number }) => rule.port_range_min)).toEqual([22, 6443]);
    const listed = await call(cloud.demo, 'GET', `${cloud.v2}/security-group-rules?security_group_id=${group.id}&direction=ingress`);
    expect(listed.body.security_group_rules).toHaveLength(2);
  });

  it('creates nothing when one item is refused', async () => {
    const group = await create(cloud.demo, `${cloud.v2}/security-groups`, 'security_group', { name: unique('sg') });
    const res = await call(cloud.demo, 'POST', `${cloud.v2}/security-group-rules`, {
      security_group_rules: [
        { security_group_id: group.id, direction: 'ingress', protocol: 'tcp', port_range_min: 80, port_range_max: 80 },
        { security_group_id: group.id, direction: 'sideways' },
      ],
    });
    expect(res.status).toBe(400);
    const listed = await call(cloud.demo, 'GET', `${cloud.v2}/security-group-rules?security_group_id=${group.id}&direction=ingress`);
    expect(listed.body.security_group_rules).toHaveLength(0);
  });

  it('refuses an empty list', async () => {
    const res = await call(cloud.demo, 'POST', `${cloud.v2}/security-group-rules`, { security_group_rules: [] });
    expectFault(res, 400, 'InvalidInput');
  });
});
