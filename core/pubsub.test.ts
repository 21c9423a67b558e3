import { randomUUID } from 'node:crypto';
import { TEST_REDIS_URL } from '../test/services';
import { eventually } from '../test/helpers';
import { createPlatformPubSub, SUBSCRIBER_OPTIONS } from './pubsub';
import { createRedis } from './redis';

describe('pub/sub connections', () => {
  // redis/ioredis#2037: a SUBSCRIBE sent as the connection comes up put it in subscriber mode
  // before the ready check, which then failed; the connection was torn down and rebuilt and
  // what was published meanwhile was lost. Every process subscribes at start-up.
  it('subscribe as the connection comes up without an error or a reconnect', async () => {
    const errors: unknown[] = [];
    for (let i = 0; i < 10; i++) {
      const client = createRedis(TEST_REDIS_URL, SUBSCRIBER_OPTIONS);
      let reconnects = 0;
      client.on('error', (err) => errors.push(err));
      client.on('reconnecting', () => (reconnects += 1));
      try {
        const subscribed = new Promise<unknown>((resolve) => client.once('connect', () => resolve(client.subscribe(`pubsub-test-${i}`).catch((err) => err))));
        const late = new Promise((resolve) => setTimeout(() => resolve('no answer in 2 s'), 2000).unref());
        expect(await Promise.race([subscribed, late])).toBe(1);
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(reconnects).toBe(0);
      } finally {
        client.disconnect();
      }
    }
    expect(errors).toEqual([]);
  });

  it('delivers to handlers registered before the connection is up', async () => {
    const prefix = `pubsub-test-${randomUUID()}`;
    const pubsubs = Array.from({ length: 5 }, () => createPlatformPubSub(TEST_REDIS_URL, prefix));
    try {
      const received = pubsubs.map(() => 0);
      pubsubs.forEach((pubsub, i) => pubsub.on('ping', () => (received[i] += 1)));
      await eventually(async () => {
        pubsubs[0].publish('ping', { n: 1 });
        await new Promise((resolve) => setTimeout(resolve, 50));
        return received.every((n) => n > 0);
      }, 10_000, 'every handler to receive a publish');
    } finally {
      await Promise.all(pubsubs.map((p) => p.close()));
    }
  });

  it('publishSettled reaches the same handlers as publish, with and without an id, and resolves after Redis took it', async () => {
    const prefix = `pubsub-test-${randomUUID()}`;
    const listener = createPlatformPubSub(TEST_REDIS_URL, prefix);
    const publisher = createPlatformPubSub(TEST_REDIS_URL, prefix);
    try {
      const plain: unknown[] = [];
      const routed: unknown[] = [];
      listener.on('changed', (payload) => plain.push(payload));
      listener.on('changed', (payload) => routed.push(payload), 'ws_1');
      // Subscribed once a plain publish gets through.
      await eventually(async () => {
        publisher.publish('changed', { probe: true });
        await new Promise((resolve) => setTimeout(resolve, 20));
        return plain.length > 0;
      }, 10_000, 'the subscription');
      plain.length = 0;
      await publisher.publishSettled('changed', { userId: 'u_1' });
      await publisher.publishSettled('changed', { member: 'u_2' }, 'ws_1');
      await eventually(() => plain.length === 1 && routed.length === 1, 5000, 'both messages');
      expect(plain).toEqual([{ userId: 'u_1' }]);
      expect(routed).toEqual([{ member: 'u_2' }]);
    } finally {
      await Promise.all([listener.close(), publisher.close()]);
    }
  });

  it('publishSettled gives up after 2 s when Redis is unreachable, rather than holding the caller', async () => {
    // Nothing listens on port 1: commands queue for a reconnect that never comes.
    const pubsub = createPlatformPubSub('redis://127.0.0.1:1', `pubsub-test-${randomUUID()}`);
    const started = Date.now();
    try {
      await expect(pubsub.publishSettled('changed', { userId: 'u_1' })).rejects.toThrow(/did not take/);
      expect(Date.now() - started).toBeLessThan(4000);
    } finally {
      // Closing does not wait on a connection that never comes either.
      const closing = Date.now();
      await pubsub.close();
      expect(Date.now() - closing).toBeLessThan(2000);
    }
  });
});

