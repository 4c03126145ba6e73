import * as vscode from "vscode";
import { AppsRuntime, demoHandlers, HandlerRegistry, ollamaHandlers, parseRecipes, probeOllama, ProcessPool, recipeHandlers, type Recipe } from "../handlers";
import { userStateDir } from "../policy/privateFiles";
import type { Handler } from "../worker/handler";
import { runAppsAllowed } from "./appsConsent";
import { DisposableOwner } from "../lifecycle";
import { messageOf } from "../worker/errors";

/** Settings that change what this machine offers; a change applies at once (no reload of the window). */
const OFFER_SETTINGS = ["farmhand.recipes", "farmhand.ollamaUrl", "farmhand.ollamaModels", "farmhand.runApps"];

/** The farm this machine belongs to, as far as apps need it: modules download from it with the worker key. */
export type AppsFarm = { readonly url: string; readonly apiKey: string | undefined; readonly onDidChange: vscode.Event<void> };

/**
 * The machine's handlers: built-ins, the Ollama models the donor chose to offer, and the owner's recipes. Recipes
 * and the Ollama choice are read only from the USER's machine-scoped settings (`inspect().globalValue`), so a
 * workspace can never add a command to run or a model to offer. When they change, the registry swaps the handlers
 * in one step and the running worker advertises the new set (running jobs go on).
 */
export class EngineHandlers extends DisposableOwner {
  readonly pool = new ProcessPool({ niceness: 19 });
  readonly registry = new HandlerRegistry();
  /** One module cache for this window's whole life: a reload of the settings builds a new handler, not a new cache. */
  private readonly apps = new AppsRuntime(this.pool, { stateDir: userStateDir() });
  private removeOffered: Array<() => void> = [];
  /** Hears the size of each app module downloaded (what a metered connection carried). */
  onModuleDownloaded: (bytes: number) => void = () => undefined;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly farm?: AppsFarm,
  ) {
    super();
    for (const handler of demoHandlers(this.pool)) this.registry.register(handler);
    this.reload();
    this._register(vscode.workspace.onDidChangeConfiguration((e) => OFFER_SETTINGS.some((key) => e.affectsConfiguration(key)) && this.reload()));
    if (farm) this._register(farm.onDidChange(() => this.reload()));
    this._register({ dispose: () => this.pool.close() });
  }

  /** Re-read the recipes and the Ollama offer from settings. */
  reload(): void {
    const config = vscode.workspace.getConfiguration("farmhand");
    const offered = [
      ...ollamaHandlers(this.pool, { url: config.get<string>("ollamaUrl") || undefined, models: offeredModels() }),
      ...recipeHandlers(this.pool, this.readRecipes()),
      ...this.appsHandler(),
    ];
    this.registry.batch(() => {
      this.removeOffered.splice(0).forEach((remove) => remove());
      this.removeOffered = offered.map((handler) => this.registry.register(handler));
    });
  }

  /** The `apps` handler, only while the donor allows apps and this machine belongs to a farm. */
  private appsHandler(): Handler[] {
    const apiKey = this.farm?.apiKey;
    if (!runAppsAllowed() || !this.farm?.url || !apiKey) return [];
    try {
      return [this.apps.handlerFor({ deploymentUrl: this.farm.url, apiKey, onDownloaded: (bytes) => this.onModuleDownloaded(bytes) })];
    } catch (error) {
      this.log.error(`Apps are not offered: ${messageOf(error)}`);
      return [];
    }
  }

  private readRecipes(): Recipe[] {
    const declared = vscode.workspace.getConfiguration("farmhand").inspect<Record<string, unknown>>("recipes")?.globalValue;
    if (!declared || Object.keys(declared).length === 0) return [];
    try {
      return parseRecipes(declared);
    } catch (error) {
      const message = messageOf(error);
      this.log.error(`farmhand.recipes ignored: ${message}`);
      void vscode.window
        .showErrorMessage(`Farmhand: your recipes setting has problems and was ignored. ${message}`, "Open Settings")
        .then((choice) => choice && vscode.commands.executeCommand("workbench.action.openSettings", "farmhand.recipes"));
      return [];
    }
  }
}

/** The Ollama models the donor chose to offer (user settings only); none until they choose. */
export function offeredModels(): string[] {
  const value = vscode.workspace.getConfiguration("farmhand").inspect<unknown>("ollamaModels")?.globalValue;
  return Array.isArray(value) ? value.filter((m): m is string => typeof m === "string" && m.trim() !== "").map((m) => m.trim().toLowerCase()) : [];
}

/** Record the donor's choice of Ollama models (machine-scoped user setting). */
export async function offerModels(models: readonly string[]): Promise<void> {
  await vscode.workspace.getConfiguration("farmhand").update("ollamaModels", [...models], vscode.ConfigurationTarget.Global);
}

/** The models of the Ollama running here (at the farmhand.ollamaUrl setting, else its default address); none when it does not run. */
export async function localOllamaModels(): Promise<string[]> {
  const url = vscode.workspace.getConfiguration("farmhand").get<string>("ollamaUrl") || undefined;
  const probe = await probeOllama(url);
  return probe.running ? probe.models : [];
}
