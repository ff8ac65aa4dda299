import { Module } from '@nestjs/common';
import { PortalSessions } from './portal-sessions.service';

/**
 * Portal sessions alone (signing and verifying), below the billing engine: its customer notices
 * carry portal links, and the portal's API sits above the engine.
 */
@Module({ providers: [PortalSessions], exports: [PortalSessions] })
export class PortalSessionsModule {}
