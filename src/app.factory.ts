import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { configureApp } from './app.setup';
import { BoundedExpressAdapter } from './common/http/bounded-express-adapter';
import { AppConfig } from './config/app-config';

/** Builds the configured (not yet listening) HTTP application. */
export async function createApp(
  config: AppConfig,
  databaseUrl: string,
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot(config, databaseUrl),
    new BoundedExpressAdapter(config.HTTP_REQUEST_TIMEOUT_MS),
    {
      bodyParser: false,
      bufferLogs: true,
    },
  );
  configureApp(app, config);
  return app;
}
