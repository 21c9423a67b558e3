import type { WorkflowConnection, WorkflowNode } from '../model/entities';

/** How the engine walks a graph: the nodes it may run, in order, and what feeds each. */
export interface ExecutionPlan {
  /** Nodes reachable from the start nodes, in a topological order (ties keep the definition's order). */
  order: WorkflowNode[];
  /** Nodes that take the execution's input (the trigger, or every node without inputs). */
  starts: Set<string>;
  /** Incoming connections of each planned node, in the definition's order (its input indexes). */
  incoming: Map<string, WorkflowConnection[]>;
}

/**
 * Plans an execution: from the trigger node when one is given (else from every node that has
 * no incoming connection), the reachable nodes in topological order. Graphs are validated as
 * acyclic when saved; a cycle here still cannot loop (its nodes are left out).
 */
export function planExecution(nodes: WorkflowNode[], connections: WorkflowConnection[], triggerNodeId: string | null): ExecutionPlan {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const outgoing = new Map<string, WorkflowConnection[]>();
  const allIncoming = new Map<string, WorkflowConnection[]>();
  for (const c of connections) {
    if (!byId.has(c.from) || !byId.has(c.to)) continue;
    (outgoing.get(c.from) ?? outgoing.set(c.from, []).get(c.from)!).push(c);
    (allIncoming.get(c.to) ?? allIncoming.set(c.to, []).get(c.to)!).push(c);
  }
  const starts = new Set<string>(triggerNodeId && byId.has(triggerNodeId) ? [triggerNodeId] : nodes.filter((n) => !allIncoming.has(n.id)).map((n) => n.id));

  // Reachable from the starts.
  const reachable = new Set<string>(starts);
  const stack = [...starts];
  while (stack.length) {
    const id = stack.pop()!;
    for (const c of outgoing.get(id) ?? []) {
      if (!reachable.has(c.to)) {
        reachable.add(c.to);
        stack.push(c.to);
      }
    }
  }

  // Kahn's algorithm over the reachable part; only edges between reachable nodes count.
  const incoming = new Map<string, WorkflowConnection[]>();
  const pending = new Map<string, number>();
  for (const id of reachable) {
    const edges = (allIncoming.get(id) ?? []).filter((c) => reachable.has(c.from));
    incoming.set(id, starts.has(id) ? [] : edges);
    pending.set(id, starts.has(id) ? 0 : edges.length);
  }
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const ready = nodes.filter((n) => reachable.has(n.id) && pending.get(n.id) === 0).map((n) => n.id);
  const order: WorkflowNode[] = [];
  while (ready.length) {
    ready.sort((a, b) => index.get(a)! - index.get(b)!);
    const id = ready.shift()!;
    order.push(byId.get(id)!);
    for (const c of outgoing.get(id) ?? []) {
      if (!reachable.has(c.to) || starts.has(c.to)) continue;
      const left = pending.get(c.to)! - 1;
      pending.set(c.to, left);
      if (left === 0) ready.push(c.to);
    }
  }
  return { order, starts, incoming };
}
