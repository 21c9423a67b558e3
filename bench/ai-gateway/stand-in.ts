/** Runs one stand-in upstream in its own process for bench/ai-gateway (STAND_IN_API, STAND_IN_PORT, STAND_IN_KEY). */
import { startStandIn, type StandInApi } from '../../subgraphs/ai/testing/stand-ins';

async function main() {
  const standIn = await startStandIn((process.env.STAND_IN_API ?? 'openai') as StandInApi, {
    port: Number(process.env.STAND_IN_PORT ?? 0),
    apiKey: process.env.STAND_IN_KEY ?? 'sk-bench',
  });
  process.stdout.write(`${standIn.baseUrl}\n`);
  const stop = () => void standIn.close().finally(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
