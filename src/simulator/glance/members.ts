/** The simulated Glance's image members: list, add, accept or reject, remove. */
import type { Router } from 'express';
import { z } from 'zod';
import { fail } from './errors.js';
import { auth, isAdmin, ownedImage, timestamp, visibleImage, type GlanceStore, type Image } from './model.js';

const memberStatusSchema = z.object({ status: z.enum(['pending', 'accepted', 'rejected']) });

export function memberRoutes(router: Router, store: GlanceStore): void {
  const memberView = (image: Image, memberId: string) => {
    const m = image.members.get(memberId)!;
    return {
      created_at: timestamp(m.createdAt),
      image_id: image.id,
      member_id: memberId,
      schema: '/v2/schemas/member',
      status: m.status,
      updated_at: timestamp(m.updatedAt),
    };
  };
  router.get('/v2/images/:id/members', (req, res) => {
    const image = visibleImage(store, res, req.params.id);
    if (!image) return;
    const caller = auth(res);
    const members =
      isAdmin(caller) || image.owner === caller.projectId ? [...image.members.keys()] : image.members.has(caller.projectId) ? [caller.projectId] : [];
    res.json({ members: members.map((m) => memberView(image, m)), schema: '/v2/schemas/members' });
  });
  router.post('/v2/images/:id/members', (req, res) => {
    const image = ownedImage(store, res, req.params.id);
    if (!image) return;
    const parsed = z.object({ member: z.string().min(1) }).safeParse(req.body);
    if (!parsed.success) return fail(res, 400, 'Member to be added not specified');
    if (image.visibility !== 'shared') return fail(res, 403, `Only shared images have members.`);
    if (image.members.has(parsed.data.member)) return fail(res, 409, `Member ${parsed.data.member} already associated with image ${image.id}`);
    const t = store.ctx.clock.now();
    image.members.set(parsed.data.member, { status: 'pending', createdAt: t, updatedAt: t });
    res.json(memberView(image, parsed.data.member));
  });
  router.put('/v2/images/:id/members/:member', (req, res) => {
    const image = visibleImage(store, res, req.params.id);
    if (!image) return;
    const member = image.members.get(req.params.member);
    if (!member) return fail(res, 404, `${req.params.member} is not a member of image ${image.id}`);
    if (auth(res).projectId !== req.params.member && !isAdmin(auth(res))) return fail(res, 403, 'You are not permitted to modify this image member.');
    const parsed = memberStatusSchema.safeParse(req.body);
    if (!parsed.success) return fail(res, 400, 'Status not specified');
    member.status = parsed.data.status;
    member.updatedAt = store.ctx.clock.now();
    res.json(memberView(image, req.params.member));
  });
  router.delete('/v2/images/:id/members/:member', (req, res) => {
    const image = ownedImage(store, res, req.params.id);
    if (!image) return;
    if (!image.members.delete(req.params.member)) return fail(res, 404, `${req.params.member} is not a member of image ${image.id}`);
    res.status(204).end();
  });
}
