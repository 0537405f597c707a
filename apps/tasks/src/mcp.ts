import type { CallOperation, McpPrompt, RestAnswer } from '@app/auth/mcp';

/** What the tasks service tells an assistant on connecting, and appends to each tool. */
export const mcpInstructions =
  'A personal to-do list: tasks with optional due times, priorities (high, medium, low), tags, subtasks (one level) and ' +
  'recurrence ("every monday", "every 2 weeks", "every! 3 days" counts from completion). Views: today (open tasks due by ' +
  'the end of today, overdue included), upcoming, all (manual order), completed. Start with listTasks; complete a task ' +
  'with its own tool rather than editing it; use the plan_my_day prompt for a daily plan.';

export const mcpToolNotes =
  'Times are ISO 8601 instants in UTC (send "2030-05-01T09:00:00Z" or with an offset, e.g. "+02:00"). "Today" and the ' +
  "views are computed in the account's time zone (an X-Timezone header on the MCP connection overrides it). Ids are UUIDs. " +
  'Errors come back as isError with { error: { code, message, details } }; details[].path names the argument at fault.';

interface Task {
  id: string;
  title: string;
  priority: string | null;
  dueAt: string | null;
  tags: string[];
  recurrence?: string | null;
}

function ok(answer: RestAnswer): Record<string, unknown> {
  if (answer.status >= 400)
    throw new Error(`the tasks service answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body as Record<string, unknown>;
}

const line = (t: Task) =>
  `- ${t.title}${t.priority ? ` [${t.priority}]` : ''}${t.dueAt ? ` (due ${t.dueAt})` : ''}${t.tags.length ? ` #${t.tags.join(' #')}` : ''}${t.recurrence ? ` repeats ${t.recurrence}` : ''} (id ${t.id})`;

/** Today's and overdue open tasks, read through listTasks view=today in the caller's zone. */
async function planMyDay(_args: Record<string, string>, call: CallOperation): Promise<string> {
  const body = ok(await call('listTasks', { view: 'today', limit: 200 }));
  const tasks = body.items as Task[];
  const now = Date.now();
  const overdue = tasks.filter((t) => t.dueAt !== null && Date.parse(t.dueAt) < now);
  const today = tasks.filter((t) => !overdue.includes(t));
  const rank = (t: Task) => ({ high: 0, medium: 1, low: 2 })[t.priority as 'high'] ?? 3;
  const section = (title: string, list: Task[]) =>
    `${title} (${list.length}):\n${
      list.length
        ? [...list]
            .sort((a, b) => rank(a) - rank(b))
            .map(line)
            .join('\n')
        : '- none'
    }`;
  return [
    `Help me plan my day. It is now ${new Date(now).toISOString()}; "today" below is in my account's time zone.`,
    section('Overdue', overdue),
    section('Due today', today),
    body.nextCursor
      ? 'There are more tasks due today than listed here; call listTasks with view=today and the cursor for the rest.'
      : '',
    'Suggest an order for the day with the overdue and high-priority tasks first, say which ones could be rescheduled ' +
      '(updateTask with a new dueAt), and ask me before completing or changing anything.',
  ]
    .filter(Boolean)
    .join('\n\n');
}

export const mcpPrompts: McpPrompt[] = [
  {
    name: 'plan_my_day',
    title: 'Plan my day',
    description: "Today's and overdue open tasks, by priority, with a request to plan the day around them",
    scopes: ['tasks:read'],
    build: planMyDay,
  },
];
