// The OAuth module's hooks into the platform: the bootstrap file's users and oauth_applications
// sections, and the operator commands.
import { registerBootstrapSection } from './bootstrap';
import { registerOAuthCommands } from './cli/oauth-commands';
import { applyOAuthSections, checkOAuthSections } from './oauth-bootstrap';

export function registerOAuthModule(): void {
  registerBootstrapSection(applyOAuthSections, checkOAuthSections);
  registerOAuthCommands();
}
