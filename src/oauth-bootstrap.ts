// The bootstrap file's `users` and `oauth_applications` sections (DESIGN §3). Every entry is checked
// before any is applied, so a faulty file changes nothing, and each error names its path in the file.
// Passwords are stored with scrypt and client secrets as SHA-256, like those made by the CLI; applying the
// same file twice appends nothing.
import {
  loadApplication,
  registerApplication,
  rotateClientSecret,
  setApplicationDisabled,
  updateApplication,
} from '../commands/oauth/application-handler';
import { CLIENT_ID_PATTERN, checkProfile } from '../commands/oauth/applications';
import type { ApplicationProfile } from '../commands/oauth/events';
import { createUser, loadUser, setRestaurantAccess, setUserPassword } from '../commands/oauth/user-handler';
import { checkEmail, checkPassword } from '../commands/oauth/users';
import type { BootstrapFile, SectionApplier, SectionCheck } from './bootstrap';
import { ApiError, type Issue } from './core/errors';
import type { Scope } from './core/scopes';
import type { WriteDeps } from './core/write-deps';
import { arr, bool, nullable, obj, optional, str } from './http/schema';
import { validateInput } from './http/validate';

const userEntry = obj({
  email: str({ min: 3, max: 320 }),
  password: str({ min: 1, max: 1024 }),
  restaurants: optional(arr(obj({ id: str({ min: 1, max: 64 }), manage_integrations: optional(bool()) }))),
});

const applicationEntry = obj({
  client_id: str({ min: 3, max: 64 }),
  client_secret: str({ min: 8, max: 256 }),
  name: str({ min: 1, max: 200 }),
  logo_url: optional(nullable(str({ max: 2000 }))),
  redirect_uris: arr(str({ min: 1, max: 2000 })),
  allowed_scopes: arr(str({ max: 64 })),
  published_by_operator: optional(bool()),
  disabled: optional(bool()),
});

function collect(issues: Issue[], prefix: string, run: () => void) {
  try {
    run();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const list = (err.details?.issues as Issue[] | undefined) ?? [
      { path: '', code: 'invalid', message: err.message },
    ];
    for (const i of list) issues.push({ ...i, path: i.path ? `${prefix}.${i.path}` : prefix });
  }
}

type UserPlan = {
  email: string;
  password: string;
  restaurants?: { id: string; manage_integrations?: boolean }[];
};
type AppPlan = ApplicationProfile & { client_id: string; client_secret: string; disabled?: boolean };

/**
 * The profiles of the file's applications already registered: a URI one holds is kept as stored, not
 * checked again by rules added since (checkProfile), so a deployment whose file names it still starts.
 */
async function storedProfiles(
  deps: WriteDeps,
  file: BootstrapFile,
): Promise<Map<string, ApplicationProfile>> {
  const out = new Map<string, ApplicationProfile>();
  for (const raw of file.oauth_applications ?? []) {
    const id = (raw as { client_id?: unknown } | null)?.client_id;
    if (typeof id !== 'string' || !CLIENT_ID_PATTERN.test(id) || out.has(id)) continue;
    const profile = (await loadApplication(deps, id)).profile;
    if (profile) out.set(id, profile);
  }
  return out;
}

/** Every entry checked; throws naming each problem's path in the file. Appends nothing. */
function parseOAuthSections(
  file: BootstrapFile,
  stored: Map<string, ApplicationProfile>,
): { users: (UserPlan | null)[]; apps: (AppPlan | null)[] } {
  const issues: Issue[] = [];
  const users = (file.users ?? []).map((raw, i) => {
    let entry: ReturnType<typeof userEntry.struct.create> | null = null;
    collect(issues, `users.${i}`, () => {
      entry = validateInput(raw, userEntry, 'body');
      checkEmail(entry.email);
      checkPassword(entry.password);
    });
    return entry as unknown as {
      email: string;
      password: string;
      restaurants?: { id: string; manage_integrations?: boolean }[];
    } | null;
  });
  const apps = (file.oauth_applications ?? []).map((raw, i) => {
    let entry:
      | (ApplicationProfile & { client_id: string; client_secret: string; disabled?: boolean })
      | null = null;
    collect(issues, `oauth_applications.${i}`, () => {
      const v = validateInput(raw, applicationEntry, 'body');
      if (!CLIENT_ID_PATTERN.test(v.client_id))
        throw new ApiError(400, 'VALIDATION_ERROR', 'client_id', {
          issues: [
            { path: 'client_id', code: 'invalid_format', message: 'client_id is 3 to 64 of A-Z a-z 0-9 _ -' },
          ],
        });
      const profile = checkProfile(
        {
          name: v.name,
          logo_url: v.logo_url ?? null,
          redirect_uris: v.redirect_uris,
          allowed_scopes: v.allowed_scopes as Scope[],
          published_by_operator: v.published_by_operator ?? false,
        },
        stored.get(v.client_id),
      ) as ApplicationProfile;
      entry = { ...profile, client_id: v.client_id, client_secret: v.client_secret, disabled: v.disabled };
    });
    return entry as
      | (ApplicationProfile & { client_id: string; client_secret: string; disabled?: boolean })
      | null;
  });
  if (issues.length)
    throw new Error(
      `the bootstrap file's users or oauth_applications are invalid:\n${issues.map((x) => `  - ${x.path}: ${x.message}`).join('\n')}`,
    );
  return { users, apps };
}

export const checkOAuthSections: SectionCheck = async (deps, file) => {
  parseOAuthSections(file, await storedProfiles(deps, file));
};

export const applyOAuthSections: SectionApplier = async (deps, file, meta) => {
  const { users, apps } = parseOAuthSections(file, await storedProfiles(deps, file));
  const notes: string[] = [];
  let changedUsers = 0;
  for (const u of users) {
    if (!u) continue;
    const existing = await loadUser(deps, u.email);
    let n = existing.user_id
      ? (await setUserPassword(deps, u.email, u.password, meta)).appended.length
      : (await createUser(deps, u.email, u.password, meta)).appended.length;
    for (const r of u.restaurants ?? [])
      n += (
        await setRestaurantAccess(
          deps,
          u.email,
          { restaurant_id: r.id, manage_integrations: r.manage_integrations ?? true },
          meta,
        )
      ).appended.length;
    if (n) changedUsers++;
  }
  let changedApps = 0;
  for (const a of apps) {
    if (!a) continue;
    const { client_id, client_secret, disabled, ...profile } = a;
    const existing = await loadApplication(deps, client_id);
    let n = 0;
    if (!existing.profile)
      n += (await registerApplication(deps, { clientId: client_id, secret: client_secret, profile }, meta))
        .appended.length;
    else {
      n += (await updateApplication(deps, client_id, profile, meta)).appended.length;
      n += (await rotateClientSecret(deps, client_id, meta, client_secret)).appended.length;
    }
    n += (await setApplicationDisabled(deps, client_id, disabled === true, meta)).appended.length;
    if (n) changedApps++;
  }
  if (changedUsers) notes.push(`users: ${changedUsers} created or changed`);
  if (changedApps) notes.push(`oauth_applications: ${changedApps} registered or changed`);
  return { notes };
};
